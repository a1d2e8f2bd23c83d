// A mesh's signed distance field and surface samples. Distances come from closest-point queries on
// a bounding-volume hierarchy of the triangles (Eigen's KdBVH); the sign from the angle-weighted
// pseudonormal of the closest feature (Baerentzen & Aanaes 2005), which is exact for a closed,
// consistently oriented mesh where ray parity tests stumble on edges and vertices. In floating point
// it is not quite: on the glmark2 bunny it put two interior nodes outside, one 2.8 cells deep (a
// contact missed there lets a body sink). So the sign is checked by the winding number of rays along
// the grid's x and y lines, and a node whose pseudonormal sign both rays contradict is turned over.
#include <unsupported/Eigen/BVH>

#include <utility>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "scene/mesh.h"

#include "kernels/mesh_clusters.h"

namespace stagger {

namespace {

using Box = Eigen::AlignedBox<double, 3>;

Eigen::Vector3d eig(Vec3<double> v) { return {v.x, v.y, v.z}; }

enum Feature { face = 0, vertex0 = 1, vertex1 = 2, vertex2 = 3, edge01 = 4, edge12 = 5, edge20 = 6 };

// Closest point of triangle abc to p and which feature it lies on (Ericson, Real-Time Collision
// Detection, 5.1.5).
Vec3<double> closest_on_triangle(Vec3<double> p, Vec3<double> a, Vec3<double> b, Vec3<double> c, Feature& where) {
  Vec3<double> ab = b - a, ac = c - a, ap = p - a;
  double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return where = vertex0, a;
  Vec3<double> bp = p - b;
  double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return where = vertex1, b;
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return where = edge01, a + (d1 / (d1 - d3)) * ab;
  Vec3<double> cp = p - c;
  double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return where = vertex2, c;
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return where = edge20, a + (d2 / (d2 - d6)) * ac;
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) return where = edge12, b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  double inv = 1.0 / (va + vb + vc);
  return where = face, a + (vb * inv) * ab + (vc * inv) * ac;
}

// The angle of triangle t at its corner k (0 for a degenerate corner).
double corner_angle(const Mesh& m, const std::array<int, 3>& tri, int k) {
  Vec3<double> e1 = m.vertices[tri[(k + 1) % 3]] - m.vertices[tri[k]], e2 = m.vertices[tri[(k + 2) % 3]] - m.vertices[tri[k]];
  double l1 = norm(e1), l2 = norm(e2);
  return l1 > 0 && l2 > 0 ? std::acos(std::clamp(dot(e1, e2) / (l1 * l2), -1.0, 1.0)) : 0.0;
}

// Pseudonormals: per triangle its face normal and its three edges' (the sum of the two adjacent
// faces' normals); per vertex the angle-weighted sum of its faces' normals.
struct Pseudonormals {
  std::vector<Vec3<double>> face, edge, vertex;  // edge: 3 per triangle, edge k from corner k to k+1
};

Pseudonormals pseudonormals(const Mesh& m) {
  const int nt = int(m.triangles.size());
  Pseudonormals p;
  p.face.resize(nt);
  p.edge.assign(3 * std::size_t(nt), Vec3<double>{0, 0, 0});
  p.vertex.assign(m.vertices.size(), Vec3<double>{0, 0, 0});
  for (int t = 0; t < nt; ++t) {
    const auto& tri = m.triangles[t];
    Vec3<double> n = cross(m.vertices[tri[1]] - m.vertices[tri[0]], m.vertices[tri[2]] - m.vertices[tri[0]]);
    double len = norm(n);
    p.face[t] = len > 0 ? (1.0 / len) * n : Vec3<double>{0, 0, 0};
    for (int k = 0; k < 3; ++k) p.vertex[tri[k]] += corner_angle(m, tri, k) * p.face[t];
  }
  std::unordered_map<std::uint64_t, int> owner;  // directed edge -> triangle
  owner.reserve(3 * std::size_t(nt));
  for (int t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) owner.emplace(directed_edge_key(m.triangles[t][k], m.triangles[t][(k + 1) % 3]), t);
  for (int t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) {
      auto other = owner.find(directed_edge_key(m.triangles[t][(k + 1) % 3], m.triangles[t][k]));  // exists: the mesh is closed
      p.edge[3 * std::size_t(t) + k] = p.face[t] + (other != owner.end() ? p.face[other->second] : p.face[t]);
    }
  return p;
}

using Tree = Eigen::KdBVH<double, 3, int>;

// The nearest triangle to a point: depth first through the hierarchy, nearer child first, pruning
// boxes farther than the best so far. Seeded with a triangle near the previous grid node, whose
// distance bounds the search from the start (neighbouring nodes share nearest triangles).
struct NearestTriangle {
  const Mesh& mesh;
  Vec3<double> p;
  double best = std::numeric_limits<double>::infinity();  // squared distance
  int triangle = -1;
  Feature where = face;
  Vec3<double> point{0, 0, 0};

  void offer(int t) {
    const auto& tri = mesh.triangles[t];
    Feature f;
    Vec3<double> q = closest_on_triangle(p, mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]], f);
    double d2 = norm2(q - p);
    if (d2 < best) {
      best = d2;
      triangle = t;
      where = f;
      point = q;
    }
  }

  void search(const Tree& tree) {
    const Eigen::Vector3d e = eig(p);
    int stack[128];
    int top = 0;
    stack[top++] = tree.getRootIndex();
    while (top > 0) {
      const int node = stack[--top];
      Tree::VolumeIterator vb = nullptr, ve = nullptr;  // Eigen reads ve before it sets it for a leaf root
      Tree::ObjectIterator ob = nullptr, oe = nullptr;
      tree.getChildren(node, vb, ve, ob, oe);
      for (; ob != oe; ++ob) offer(*ob);
      int near[2];
      double dist[2];
      int count = 0;
      for (; vb != ve; ++vb) {
        double d = tree.getVolume(*vb).squaredExteriorDistance(e);
        if (d < best) {
          near[count] = *vb;
          dist[count++] = d;
        }
      }
      if (count == 2 && dist[1] < dist[0]) std::swap(near[0], near[1]);
      for (int c = count - 1; c >= 0; --c) stack[top++] = near[c];  // nearer child on top
    }
  }
};

// Inside (1) or outside (0) for every node of the field's grid, by the winding number of a ray from
// the node along +axis: the triangles it crosses, +1 where it leaves through an outward face and -1
// where it enters (a winding number, not a parity, so that overlapping closed shells count as
// inside). The rays run along grid lines, offset by a tiny irrational fraction of a cell so that they
// miss edges and vertices; triangles are bucketed by the grid lines their projections cover.
std::vector<unsigned char> ray_inside(const Mesh& mesh, int axis) {
  const int a = axis, b = (axis + 1) % 3, c = (axis + 2) % 3;
  const int na = mesh.field_nodes[a], nb = mesh.field_nodes[b], nc = mesh.field_nodes[c];
  const double cell = mesh.field_cell;
  const Vec3<double> o = mesh.field_origin;
  const double db = 0.7071067811865 * 1e-6 * cell, dc = 0.5772156649015 * 1e-6 * cell;
  // Grid lines (j, k) whose perturbed point lies in each triangle's bounding box in (b, c).
  std::vector<int> begin(std::size_t(nb) * nc + 1, 0), items;
  auto lines = [&](const std::array<int, 3>& t, int& j0, int& j1, int& k0, int& k1) {
    double lo_b = mesh.vertices[t[0]][b], hi_b = lo_b, lo_c = mesh.vertices[t[0]][c], hi_c = lo_c;
    for (int v = 1; v < 3; ++v) {
      lo_b = std::min(lo_b, mesh.vertices[t[v]][b]);
      hi_b = std::max(hi_b, mesh.vertices[t[v]][b]);
      lo_c = std::min(lo_c, mesh.vertices[t[v]][c]);
      hi_c = std::max(hi_c, mesh.vertices[t[v]][c]);
    }
    j0 = std::max(0, int(std::ceil((lo_b - o[b] - db) / cell)));
    j1 = std::min(nb - 1, int(std::floor((hi_b - o[b] - db) / cell)));
    k0 = std::max(0, int(std::ceil((lo_c - o[c] - dc) / cell)));
    k1 = std::min(nc - 1, int(std::floor((hi_c - o[c] - dc) / cell)));
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (int t = 0; t < int(mesh.triangles.size()); ++t) {
      int j0, j1, k0, k1;
      lines(mesh.triangles[t], j0, j1, k0, k1);
      for (int k = k0; k <= k1; ++k)
        for (int j = j0; j <= j1; ++j) {
          const std::size_t line = std::size_t(j) + std::size_t(nb) * k;
          if (pass == 0) ++begin[line + 1];
          else items[begin[line]++] = t;
        }
    }
    if (pass == 0) {
      for (std::size_t i = 1; i < begin.size(); ++i) begin[i] += begin[i - 1];
      items.resize(begin.back());
    } else {
      for (std::size_t i = begin.size() - 1; i > 0; --i) begin[i] = begin[i - 1];  // undo the fill's shift
      begin[0] = 0;
    }
  }
  std::vector<unsigned char> inside(std::size_t(na) * nb * nc, 0);
  const int lines_count = nb * nc;
#pragma omp parallel for schedule(dynamic, 16)
  for (int line = 0; line < lines_count; ++line) {
    const int j = line % nb, k = line / nb;
    const double pb = o[b] + cell * j + db, pc = o[c] + cell * k + dc;
    std::vector<std::pair<double, int>> crossings;  // where, and +1 leaving / -1 entering
    for (int i = begin[line]; i < begin[line + 1]; ++i) {
      const auto& t = mesh.triangles[items[i]];
      const Vec3<double>&p0 = mesh.vertices[t[0]], &p1 = mesh.vertices[t[1]], &p2 = mesh.vertices[t[2]];
      const double det = (p1[b] - p0[b]) * (p2[c] - p0[c]) - (p2[b] - p0[b]) * (p1[c] - p0[c]);
      if (det == 0) continue;  // seen edge-on: the ray grazes it
      const double u = ((p1[b] - pb) * (p2[c] - pc) - (p2[b] - pb) * (p1[c] - pc)) / det;
      const double v = ((p2[b] - pb) * (p0[c] - pc) - (p0[b] - pb) * (p2[c] - pc)) / det;
      const double w = 1 - u - v;
      if (u < 0 || v < 0 || w < 0) continue;
      // det is the outward normal's component along the ray (triangles wind counter-clockwise seen
      // from outside).
      crossings.push_back({u * p0[a] + v * p1[a] + w * p2[a], det > 0 ? 1 : -1});
    }
    std::sort(crossings.begin(), crossings.end());
    int winding = 0;  // of the crossings beyond the node
    for (const auto& crossing : crossings) winding += crossing.second;
    std::size_t passed = 0;
    for (int i = 0; i < na; ++i) {
      const double x = o[a] + cell * i;
      for (; passed < crossings.size() && crossings[passed].first <= x; ++passed) winding -= crossings[passed].second;
      int node[3];
      node[a] = i;
      node[b] = j;
      node[c] = k;
      const std::size_t index = node[0] + std::size_t(mesh.field_nodes[0]) * (node[1] + std::size_t(mesh.field_nodes[1]) * node[2]);
      inside[index] = winding != 0;
    }
  }
  return inside;
}

}  // namespace

void build_distance_field(Mesh& mesh, int resolution) {
  Vec3<double> lo = mesh.vertices[0], hi = mesh.vertices[0];
  for (const Vec3<double>& v : mesh.vertices)
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], v[a]);
      hi[a] = std::max(hi[a], v[a]);
    }
  const double extent = max_elem(hi - lo);
  mesh.field_cell = extent / resolution;
  // Room around the mesh for speculative contacts and samples that approach from outside.
  const double pad = std::max(0.1 * extent, 2.0 * mesh.field_cell);
  mesh.field_origin = lo - Vec3<double>{pad, pad, pad};
  for (int a = 0; a < 3; ++a) mesh.field_nodes[a] = int(std::ceil((hi[a] - lo[a] + 2 * pad) / mesh.field_cell)) + 1;

  // Triangles with area only (the others cannot be nearest in a way that decides a sign).
  std::vector<int> ids;
  std::vector<Box> boxes;
  for (int t = 0; t < int(mesh.triangles.size()); ++t) {
    const auto& tri = mesh.triangles[t];
    if (!(norm(cross(mesh.vertices[tri[1]] - mesh.vertices[tri[0]], mesh.vertices[tri[2]] - mesh.vertices[tri[0]])) > 0)) continue;
    Box b(eig(mesh.vertices[tri[0]]));
    b.extend(eig(mesh.vertices[tri[1]]));
    b.extend(eig(mesh.vertices[tri[2]]));
    ids.push_back(t);
    boxes.push_back(b);
  }
  Tree tree(ids.begin(), ids.end(), boxes.begin(), boxes.end());
  const Pseudonormals normals = pseudonormals(mesh);

  const int nx = mesh.field_nodes[0], ny = mesh.field_nodes[1], nz = mesh.field_nodes[2];
  mesh.field.assign(std::size_t(nx) * ny * nz, 0.0f);
  const int rows = ny * nz;
#pragma omp parallel for schedule(dynamic, 4)
  for (int row = 0; row < rows; ++row) {
    const int j = row % ny, k = row / ny;
    int previous = ids[0];
    for (int i = 0; i < nx; ++i) {
      NearestTriangle q{mesh, mesh.field_origin + mesh.field_cell * Vec3<double>{double(i), double(j), double(k)}};
      q.offer(previous);
      q.search(tree);
      previous = q.triangle;
      const auto& tri = mesh.triangles[q.triangle];
      Vec3<double> n;
      switch (q.where) {
        case face: n = normals.face[q.triangle]; break;
        case vertex0: case vertex1: case vertex2: n = normals.vertex[tri[q.where - vertex0]]; break;
        default: n = normals.edge[3 * std::size_t(q.triangle) + (q.where - edge01)]; break;
      }
      double d = std::sqrt(q.best);
      mesh.field[i + std::size_t(nx) * (j + std::size_t(ny) * k)] = float(dot(q.p - q.point, n) < 0 ? -d : d);
    }
  }
  const std::vector<unsigned char> inside_x = ray_inside(mesh, 0), inside_y = ray_inside(mesh, 1);
  for (std::size_t i = 0; i < mesh.field.size(); ++i) {
    const bool inside = mesh.field[i] < 0;
    if (inside_x[i] != inside && inside_y[i] != inside) mesh.field[i] = -mesh.field[i];
  }
}

namespace {

// Stores the samples cluster by cluster (kernels/mesh_clusters.h): a stable sort by cluster cube, the
// clusters numbered in order, each with its bounding sphere about its samples' mean (for skipping
// clusters far from a surface) and a sentinel at the end.
void group_samples_into_clusters(Mesh& mesh) {
  const double side = kClusterSpacing * mesh.sample_spacing;
  auto cluster_key = [&](Vec3<double> p) {
    std::array<std::int64_t, 3> k;
    for (int a = 0; a < 3; ++a) k[a] = std::int64_t(std::floor(p[a] / side));
    return k;
  };
  std::vector<std::pair<std::array<std::int64_t, 3>, Vec3<double>>> keyed;
  for (const Vec3<double>& p : mesh.samples) keyed.emplace_back(cluster_key(p), p);
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  mesh.sample_cluster.clear();
  mesh.clusters.clear();
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    mesh.samples[i] = keyed[i].second;
    if (i == 0 || keyed[i].first != keyed[i - 1].first) mesh.clusters.push_back(SampleCluster{{0, 0, 0}, 0, int(i)});
    mesh.sample_cluster.push_back(int(mesh.clusters.size()) - 1);
  }
  mesh.clusters.push_back(SampleCluster{{0, 0, 0}, 0, int(mesh.samples.size())});
  for (std::size_t k = 0; k + 1 < mesh.clusters.size(); ++k) {
    SampleCluster& c = mesh.clusters[k];
    const int end = mesh.clusters[k + 1].begin;
    for (int i = c.begin; i < end; ++i) c.centre += (1.0 / (end - c.begin)) * mesh.samples[i];
    for (int i = c.begin; i < end; ++i) c.radius = std::max(c.radius, norm(mesh.samples[i] - c.centre));
  }
}

}  // namespace

void place_samples(Mesh& mesh, double spacing) {
  mesh.sample_spacing = spacing;
  mesh.samples.clear();
  auto cube_of = [&](Vec3<double> p) {
    std::uint64_t key = 0;
    for (int a = 0; a < 3; ++a) key = key * 2097152u + (std::uint64_t(std::int64_t(std::floor(p[a] / spacing)) + 1048576) & 2097151u);
    return key;
  };
  // Angle deficit 2 pi - (sum of the angles at a vertex): the discrete Gaussian curvature, largest at tips.
  std::vector<double> deficit(mesh.vertices.size(), 2 * M_PI);
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) deficit[t[k]] -= corner_angle(mesh, t, k);
  std::unordered_map<std::uint64_t, int> sharpest;  // cube -> its most curved vertex (lowest index on ties)
  for (int i = 0; i < int(mesh.vertices.size()); ++i) {
    auto [it, fresh] = sharpest.emplace(cube_of(mesh.vertices[i]), i);
    if (!fresh && deficit[i] > deficit[it->second]) it->second = i;
  }
  std::unordered_set<std::uint64_t> taken;
  for (int i = 0; i < int(mesh.vertices.size()); ++i) {
    std::uint64_t key = cube_of(mesh.vertices[i]);
    if (sharpest[key] == i && taken.insert(key).second) mesh.samples.push_back(mesh.vertices[i]);
  }
  auto offer = [&](Vec3<double> p) {
    if (taken.insert(cube_of(p)).second) mesh.samples.push_back(p);
  };
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      Vec3<double> a = mesh.vertices[t[k]], b = mesh.vertices[t[(k + 1) % 3]];
      int pieces = int(std::ceil(norm(b - a) / spacing));
      for (int s = 1; s < pieces; ++s) offer(a + (double(s) / pieces) * (b - a));
    }
  // Inside each triangle, the centroids of its sub-triangles at the sample spacing.
  for (const auto& t : mesh.triangles) {
    Vec3<double> a = mesh.vertices[t[0]], b = mesh.vertices[t[1]], c = mesh.vertices[t[2]];
    double longest = std::max({norm(b - a), norm(c - b), norm(a - c)});
    int n = std::max(1, int(std::ceil(longest / spacing)));
    for (int i = 0; i < n; ++i)
      for (int j = 0; i + j < n; ++j) {
        double u = (i + 1.0 / 3.0) / n, v = (j + 1.0 / 3.0) / n;
        offer(a + u * (b - a) + v * (c - a));
      }
  }
  group_samples_into_clusters(mesh);
}

}  // namespace stagger
