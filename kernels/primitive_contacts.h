// Contacts between primitive shapes (spheres, boxes, planes), each written to a caller's buffer of
// kMaxPairContacts slots. Every function reports contacts whose gap is below `margin`.
#pragma once

#include "box_box.h"
#include "contact_point.h"
#include "shapes.h"

namespace stagger {

// Pose of a body as the narrow phase sees it.
struct BodyPose {
  Vec3<double> x;
  Quat<double> q;
};

STAGGER_HD STAGGER_INLINE int collide_sphere_sphere(Vec3<double> xa, double ra, Vec3<double> xb, double rb, double margin,
                                                    ContactPoint<double>* out) {
  Vec3<double> d = xa - xb;
  double dist = norm(d);
  double gap = dist - ra - rb;
  if (gap >= margin) return 0;
  // Coincident centres: any direction is as good as another; pick +z deterministically.
  Vec3<double> n = dist > 1e-300 ? (1.0 / dist) * d : Vec3<double>{0, 0, 1};
  out[0].normal = n;
  out[0].gap = gap;
  out[0].point = xb + (rb + 0.5 * gap) * n;
  out[0].feature = 0;
  return 1;
}

// The plane is the half-space below its local x-y plane; outward normal = local +z.
STAGGER_HD STAGGER_INLINE int collide_sphere_plane(Vec3<double> xs, double r, const BodyPose& plane, double margin,
                                                   ContactPoint<double>* out) {
  Vec3<double> n = rotate(plane.q, Vec3<double>{0, 0, 1});
  double dist = dot(xs - plane.x, n);
  double gap = dist - r;
  if (gap >= margin) return 0;
  out[0].normal = n;
  out[0].gap = gap;
  out[0].point = xs - (0.5 * (r + dist)) * n;
  out[0].feature = 0;
  return 1;
}

STAGGER_HD STAGGER_INLINE int collide_sphere_box(Vec3<double> xs, double r, const BodyPose& box, Vec3<double> e,
                                                 double margin, ContactPoint<double>* out) {
  Mat3<double> rot = rotation(box.q);
  Vec3<double> c = transpose(rot) * (xs - box.x);  // sphere centre in the box frame
  Vec3<double> p{clamp_to(c.x, -e.x, e.x), clamp_to(c.y, -e.y, e.y), clamp_to(c.z, -e.z, e.z)};
  Vec3<double> n_local, surface;
  double gap;
  Vec3<double> diff = c - p;
  double dist = norm(diff);
  if (dist > 0) {  // centre outside: closest point on the surface
    n_local = (1.0 / dist) * diff;
    surface = p;
    gap = dist - r;
  } else {         // centre inside: leave through the nearest face
    int axis = 0;
    double depth = e.x - abs_of(c.x);
    for (int i = 1; i < 3; ++i) {
      double di = e[i] - abs_of(c[i]);
      if (di < depth) {
        depth = di;
        axis = i;
      }
    }
    n_local = Vec3<double>{0, 0, 0};
    n_local[axis] = c[axis] >= 0 ? 1.0 : -1.0;
    surface = c;
    surface[axis] = n_local[axis] * e[axis];
    gap = -depth - r;
  }
  if (gap >= margin) return 0;
  Vec3<double> n = rot * n_local;  // from the box (B) into the sphere (A)
  Vec3<double> box_point = box.x + rot * surface;
  Vec3<double> sphere_point = xs - r * n;
  out[0].normal = n;
  out[0].gap = gap;
  out[0].point = 0.5 * (box_point + sphere_point);
  out[0].feature = 0;
  return 1;
}

// Every corner of the box within the margin of the plane; feature = corner index.
STAGGER_HD STAGGER_INLINE int collide_box_plane(const BodyPose& box, Vec3<double> e, const BodyPose& plane, double margin,
                                                ContactPoint<double>* out) {
  Vec3<double> n = rotate(plane.q, Vec3<double>{0, 0, 1});
  Mat3<double> rot = rotation(box.q);
  int count = 0;
  for (int corner = 0; corner < 8; ++corner) {
    Vec3<double> local{(corner & 1) ? e.x : -e.x, (corner & 2) ? e.y : -e.y, (corner & 4) ? e.z : -e.z};
    Vec3<double> v = box.x + rot * local;
    double dist = dot(v - plane.x, n);
    if (dist >= margin) continue;
    out[count].normal = n;
    out[count].gap = dist;
    out[count].point = v - (0.5 * dist) * n;
    out[count].feature = uint32_t(corner);
    ++count;
  }
  return count;
}

}  // namespace stagger
