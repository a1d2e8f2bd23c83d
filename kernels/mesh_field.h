// A mesh body as the narrow phase sees it: its signed distance field sampled on a regular grid in
// the body frame, and points spread over its surface (Kaufman 2009, ch. 7: samples of one body
// against the other's distance field). Plain pointers and numbers, so that the same view works on
// the host (into host/scene/mesh.h's vectors) and on a device (into uploaded copies).
#pragma once

#include <stdint.h>

#include "vec.h"

namespace stagger {

// A cluster of samples (mesh_clusters.h): samples [begin, next cluster's begin), all within `radius`
// of `centre` (body frame). A mesh's table ends with a sentinel whose begin is the sample count.
struct SampleCluster {
  Vec3<double> centre{0, 0, 0};
  double radius = 0;
  int begin = 0;
};

struct MeshView {
  const float* sdf = nullptr;      // node values, x fastest: sdf[i + nx * (j + ny * k)]; negative inside
  Vec3<double> origin{0, 0, 0};    // body-frame position of node (0, 0, 0)
  double cell = 0;                 // node spacing
  int nx = 0, ny = 0, nz = 0;
  const Vec3<double>* samples = nullptr;  // body-frame surface points
  int num_samples = 0;
  double sample_spacing = 0;       // how far apart the samples are (other shapes' samples match it)
  const int* sample_cluster = nullptr;  // each sample's cluster (mesh_clusters.h); null: every sample a contact
  const SampleCluster* clusters = nullptr;  // num_clusters + 1 entries; null: no clusters to skip samples by
  int num_clusters = 0;
};

STAGGER_HD STAGGER_INLINE double floor_of(double x) { return ::floor(x); }

// Whether a body-frame point lies within `grow` of the grid's box.
STAGGER_HD STAGGER_INLINE bool in_field_box(const MeshView& m, Vec3<double> p, double grow) {
  Vec3<double> hi = m.origin + m.cell * Vec3<double>{double(m.nx - 1), double(m.ny - 1), double(m.nz - 1)};
  return p.x >= m.origin.x - grow && p.y >= m.origin.y - grow && p.z >= m.origin.z - grow && p.x <= hi.x + grow &&
         p.y <= hi.y + grow && p.z <= hi.z + grow;
}

// Signed distance at a body-frame point by trilinear interpolation, and its direction of steepest
// ascent (unit length; the outward normal on the surface). Outside the grid (which holds the mesh
// with a margin of a tenth of its size) the value is the one at the nearest grid point plus the
// distance to it: an upper bound, close enough for the speculative contacts that far out.
STAGGER_HD STAGGER_INLINE double mesh_distance(const MeshView& m, Vec3<double> p, Vec3<double>& gradient) {
  const int n[3] = {m.nx, m.ny, m.nz};
  int cell[3];
  double t[3], outside[3];
  for (int a = 0; a < 3; ++a) {
    double f = (p[a] - m.origin[a]) / m.cell;
    double fc = clamp_to(f, 0.0, double(n[a] - 1));
    outside[a] = (f - fc) * m.cell;
    int i = int(floor_of(fc));
    i = i > n[a] - 2 ? n[a] - 2 : i;
    cell[a] = i;
    t[a] = fc - double(i);
  }
  const float* v = m.sdf + cell[0] + m.nx * (cell[1] + m.ny * cell[2]);
  const int sy = m.nx, sz = m.nx * m.ny;
  double c000 = v[0], c100 = v[1], c010 = v[sy], c110 = v[sy + 1];
  double c001 = v[sz], c101 = v[sz + 1], c011 = v[sz + sy], c111 = v[sz + sy + 1];
  double tx = t[0], ty = t[1], tz = t[2];
  double c00 = c000 + tx * (c100 - c000), c10 = c010 + tx * (c110 - c010);
  double c01 = c001 + tx * (c101 - c001), c11 = c011 + tx * (c111 - c011);
  double c0 = c00 + ty * (c10 - c00), c1 = c01 + ty * (c11 - c01);
  double value = c0 + tz * (c1 - c0);
  // The trilinear interpolant's partial derivatives (times the cell width; only the direction is used).
  double gx = (1 - ty) * (1 - tz) * (c100 - c000) + ty * (1 - tz) * (c110 - c010) + (1 - ty) * tz * (c101 - c001) +
              ty * tz * (c111 - c011);
  double gy = (1 - tz) * (c10 - c00) + tz * (c11 - c01);
  double gz = c1 - c0;
  Vec3<double> g{gx, gy, gz};
  Vec3<double> out{outside[0], outside[1], outside[2]};
  double away = norm(out);
  if (away > 0) {
    value += away;
    g = (1.0 / (norm(g) + 1e-300)) * g + (1.0 / away) * out;
  }
  double len = norm(g);
  gradient = len > 1e-300 ? (1.0 / len) * g : Vec3<double>{0, 0, 1};
  return value;
}

}  // namespace stagger
