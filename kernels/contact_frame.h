// Per-contact constants of the solve stage: the tangent basis and the right-hand side c_k.
#pragma once

#include "vec.h"

namespace stagger {

// Orthonormal t1, t2 with t1 x t2 = n, continuous in n except across n.z = 0's sign flip
// (Duff et al. 2017, "Building an orthonormal basis, revisited"). Warm starts store friction as
// a world vector, so a basis change between steps loses nothing.
template <class T>
STAGGER_HD STAGGER_INLINE void tangent_basis(Vec3<T> n, Vec3<T>& t1, Vec3<T>& t2) {
  T sign = n.z >= T(0) ? T(1) : T(-1);
  T a = T(-1) / (sign + n.z);
  T b = n.x * n.y * a;
  t1 = Vec3<T>{T(1) + sign * n.x * n.x * a, sign * b, -sign * n.x};
  t2 = Vec3<T>{b, sign + n.y * n.y * a, -n.y};
}

// c_k of SOLVER.md: a speculative contact may close its gap and no more; an overlapping one is
// pushed out at no more than the recovery speed; restitution applies only to an impact that
// happens within this step.
template <class T>
STAGGER_HD STAGGER_INLINE T contact_rhs(T gap, T h, T recovery_speed, T restitution, T normal_velocity_before,
                                        T bounce_threshold) {
  T c = gap >= T(0) ? -gap / h : min_of(-gap / h, recovery_speed);
  if (restitution > T(0) && normal_velocity_before < -bounce_threshold && gap + h * normal_velocity_before <= T(0))
    c = max_of(c, -restitution * normal_velocity_before);
  return c;
}

}  // namespace stagger
