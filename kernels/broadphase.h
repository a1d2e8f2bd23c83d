// Broad phase element functions: bounding boxes inflated by what a step can close, and the cells
// of the uniform grid they cover.
#pragma once

#include <stdint.h>

#include "integrate.h"
#include "mix_key.h"
#include "shapes.h"

namespace stagger {

struct Aabb {
  Vec3<double> lo, hi;
};

// Without short-circuits: over a run of candidates the outcome is unpredictable, and six compares
// cost less than a mispredicted branch.
STAGGER_HD STAGGER_INLINE bool overlaps(const Aabb& a, const Aabb& b) {
  return (a.lo.x <= b.hi.x) & (b.lo.x <= a.hi.x) & (a.lo.y <= b.hi.y) & (b.lo.y <= a.hi.y) & (a.lo.z <= b.hi.z) &
         (b.lo.z <= a.hi.z);
}

// The box around a bounded shape, grown by `inflate` on every side.
STAGGER_HD STAGGER_INLINE Aabb inflated_aabb(const Shape& s, Vec3<double> x, Quat<double> q, double inflate) {
  Vec3<double> half = aabb_half_widths(s, q) + Vec3<double>{inflate, inflate, inflate};
  return Aabb{x - half, x + half};
}

// Distance from a plane (through px with outward normal n) to the nearest point of a bounded shape.
STAGGER_HD STAGGER_INLINE double plane_clearance(Vec3<double> px, Vec3<double> n, const Shape& s, Vec3<double> x,
                                                 Quat<double> q) {
  double reach = s.radius;
  if (s.type == ShapeType::box || s.type == ShapeType::mesh) {  // a mesh: its bounding box about the centre
    Mat3<double> r = rotation(q);
    reach = s.half_extents.x * abs_of(dot(n, r.col(0))) + s.half_extents.y * abs_of(dot(n, r.col(1))) +
            s.half_extents.z * abs_of(dot(n, r.col(2)));
  }
  return dot(x - px, n) - reach;
}

// Integer cell coordinate of a coordinate value, saturated far beyond any grid (so that absurd
// positions, e.g. 1e300, cannot overflow the integer conversion).
STAGGER_HD STAGGER_INLINE int64_t cell_coordinate(double value, double inv_cell) {
  double c = floor(value * inv_cell);
  const double limit = 4.0e15;
  c = c > limit ? limit : (c < -limit ? -limit : c);
  return int64_t(c == c ? c : 0.0);  // NaN (never a finite body) maps to cell 0
}

// The 27 cells around a cell, itself included: cell d in [0, 27) lies at offset -1, 0 or 1 along
// `axis` (x fastest). The host's grid search and the batched stages visit them in this order.
constexpr int kNeighbourCells = 27;
STAGGER_HD STAGGER_INLINE int neighbour_cell_offset(int d, int axis) {
  return (axis == 0 ? d : axis == 1 ? d / 3 : d / 9) % 3 - 1;
}

// Key of a cell: 21 bits per axis. Far-apart cells can share a key; that only adds candidates that
// the bounding-box test then rejects.
STAGGER_HD STAGGER_INLINE uint64_t cell_key(int64_t ix, int64_t iy, int64_t iz) {
  const uint64_t mask = (1u << 21) - 1;
  return ((uint64_t(ix) & mask) << 42) | ((uint64_t(iy) & mask) << 21) | (uint64_t(iz) & mask);
}

// The cells of the grid and their buckets (a dense block of cells, or a hash table of them).
struct GridBuckets {
  int dense = 1;
  long long lo[3] = {0, 0, 0}, dims[3] = {1, 1, 1};
  unsigned long long mask = 0;
  // Bucket of cell (x, y, z), or -1 outside the dense grid.
  STAGGER_HD long long bucket(long long x, long long y, long long z) const {
    if (dense) {
      x -= lo[0];
      y -= lo[1];
      z -= lo[2];
      if (x < 0 || y < 0 || z < 0 || x >= dims[0] || y >= dims[1] || z >= dims[2]) return -1;
      return x + dims[0] * (y + dims[1] * z);
    }
    return (long long)(mix_key(cell_key(x, y, z)) & mask);
  }
};

// The buckets over cells lo..hi (inclusive) for `entries` bodies: a dense block of cells when it has
// at most a few cells per body (compact scenes: piles, beds), else a hash table of at least twice as
// many buckets as bodies (sparse scenes). Returns the number of buckets. Host code.
inline int plan_grid(const long long lo[3], const long long hi[3], int entries, GridBuckets& grid) {
  for (int a = 0; a < 3; ++a) {
    grid.lo[a] = lo[a];
    grid.dims[a] = hi[a] - lo[a] + 1;
  }
  const double dense_cells = double(grid.dims[0]) * double(grid.dims[1]) * double(grid.dims[2]);
  const double limit = 8.0 * entries > 4096.0 ? 8.0 * entries : 4096.0;
  grid.dense = dense_cells <= limit ? 1 : 0;
  int buckets = 1;
  if (grid.dense) {
    buckets = int(dense_cells);
  } else {
    while (buckets < 2 * entries && buckets < (1 << 30)) buckets <<= 1;
  }
  grid.mask = (unsigned long long)buckets - 1;
  return buckets;
}

// How far a step can bring bodies a and b together (see ContactMargins in host/collide/broadphase.h):
// envelope + h (speed_a + speed_b + spin_a d + spin_b d), d = |x_a - x_b| + the other's reach.
STAGGER_HD STAGGER_INLINE double contact_margin(double envelope, double h, double speed_a, double speed_b,
                                                double spin_a, double spin_b, Vec3<double> xa, Vec3<double> xb,
                                                const Shape& sa, const Shape& sb) {
  double m = envelope + h * (speed_a + speed_b);
  if (spin_a > 0 || spin_b > 0) {
    double d = norm(xa - xb);
    if (spin_a > 0) m += h * spin_a * (d + bounding_radius(sb));
    if (spin_b > 0) m += h * spin_b * (d + bounding_radius(sa));
  }
  return m;
}

// A body's terms of that margin: `speed` bounds how fast any point of its surface moves over the step
// (gravity included), `spin` is the angular speed of a kinematic plane, whose far points move fast.
STAGGER_HD STAGGER_INLINE void margin_speeds(const Shape& s, BodyKind kind, const KinematicMotion& motion, Vec3<double> v,
                                             Vec3<double> w, double h, double gravity, double& speed, double& spin) {
  spin = s.type == ShapeType::plane && kind == BodyKind::kinematic ? norm(motion.angular_velocity) : 0.0;
  // A sphere's surface does not move when it spins about its centre.
  double reach = s.type == ShapeType::box || s.type == ShapeType::mesh ? bounding_radius(s) : 0.0;
  switch (kind) {
    case BodyKind::dynamic: speed = norm(v) + h * gravity + norm(w) * reach; break;
    case BodyKind::kinematic: speed = kinematic_speed_bound(motion, reach); break;
    case BodyKind::fixed: speed = 0.0; break;
  }
}

}  // namespace stagger
