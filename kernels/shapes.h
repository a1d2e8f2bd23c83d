// Collision shapes and their geometric properties (bounds, volume, inertia).
// POD so that shape arrays can be copied to a device unchanged.
#pragma once

#include <stdint.h>

#include "vec.h"

namespace stagger {

// How a body moves: by the solver, not at all, or along a prescribed motion.
enum class BodyKind : uint8_t { dynamic, fixed, kinematic };

enum class ShapeType : uint8_t { sphere = 0, box = 1, plane = 2, mesh = 3 };

struct Shape {
  ShapeType type = ShapeType::sphere;
  double radius = 0;                     // sphere
  Vec3<double> half_extents{0, 0, 0};    // box; mesh: the largest |coordinate| per body axis
  int32_t mesh = -1;                     // mesh: index into the world's mesh table (host/scene/mesh.h)
  // A mesh's `radius` is its bounding radius about the centre of mass (the body origin); its volume
  // and inertia live in the mesh table, not here.
};

// Radius of the smallest sphere about the body origin that holds the shape (planes: unbounded).
STAGGER_HD STAGGER_INLINE double bounding_radius(const Shape& s) {
  switch (s.type) {
    case ShapeType::sphere: return s.radius;
    case ShapeType::box: return norm(s.half_extents);
    case ShapeType::mesh: return s.radius;
    default: return 1e300;
  }
}

// Volume (for density) and the body-frame diagonal inertia of unit mass, about the centre (primitive
// shapes; a mesh's come from its mesh table entry).
STAGGER_HD STAGGER_INLINE double shape_volume(const Shape& s) {
  switch (s.type) {
    case ShapeType::sphere: return 4.0 / 3.0 * 3.14159265358979323846 * s.radius * s.radius * s.radius;
    case ShapeType::box: return 8.0 * s.half_extents.x * s.half_extents.y * s.half_extents.z;
    default: return 0.0;
  }
}

STAGGER_HD STAGGER_INLINE Vec3<double> unit_mass_inertia(const Shape& s) {
  if (s.type == ShapeType::sphere) {
    double i = 0.4 * s.radius * s.radius;
    return {i, i, i};
  }
  if (s.type == ShapeType::box) {
    Vec3<double> e = s.half_extents;
    return {(e.y * e.y + e.z * e.z) / 3.0, (e.x * e.x + e.z * e.z) / 3.0, (e.x * e.x + e.y * e.y) / 3.0};
  }
  return {0, 0, 0};
}

// World-frame half widths of the shape's axis-aligned box at orientation q.
template <class T>
STAGGER_HD STAGGER_INLINE Vec3<T> aabb_half_widths(const Shape& s, Quat<T> q) {
  if (s.type == ShapeType::sphere) return {T(s.radius), T(s.radius), T(s.radius)};
  Mat3<T> r = rotation(q);
  Vec3<T> e{T(s.half_extents.x), T(s.half_extents.y), T(s.half_extents.z)};
  return {dot(cwise_abs(r.r0), e), dot(cwise_abs(r.r1), e), dot(cwise_abs(r.r2), e)};
}

// Characteristic size used for the automatic contact envelope: sphere diameter, smallest box edge,
// a mesh's smallest bounding-box edge.
STAGGER_HD STAGGER_INLINE double shape_size(const Shape& s) {
  if (s.type == ShapeType::sphere) return 2.0 * s.radius;
  if (s.type == ShapeType::box || s.type == ShapeType::mesh) return 2.0 * min_elem(s.half_extents);
  return 1e300;
}

}  // namespace stagger
