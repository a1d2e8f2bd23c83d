// The warm start's scale: each island's warm start gamma0 (the previous step's impulses) is replaced
// by s gamma0, where s >= 0 minimizes the QP's objective f(gamma) = 1/2 gamma'(W + C) gamma + gamma'b
// along the ray through gamma0 (C: compliance, b: the rows at zero impulse). Normal and friction
// impulses scale together, so s gamma0 stays in the cone. Why: on a bed the error a step inherits is
// mostly the column's slowest mode, a uniform stretch or squeeze of every impulse (the velocities the
// last step left carry its leftover error into this one), which APGD removes at its slowest rate and
// one scalar removes at once. Measured: docs/method.md, "Choices".
#pragma once

#include "delassus.h"
#include "feasible_sets.h"

namespace stagger {

// An island's sums along its warm start's ray: slope = gamma0'g(0) (f's slope at s = 0), curvature =
// gamma0'(g(gamma0) - g(0)) = gamma0'(W + C) gamma0, with g the QP's gradient (the contact rows).
template <class T>
struct RayTerms {
  T slope, curvature;
};
template <class T>
STAGGER_HD STAGGER_INLINE RayTerms<T> operator+(RayTerms<T> a, RayTerms<T> b) {
  return {a.slope + b.slope, a.curvature + b.curvature};
}

// Contact k's terms, from the warm start's arrays (alpha, beta: the problem's layout), its velocity under the warm start's impulses
// `vel` and under none `free_vel` (the predictor's).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE RayTerms<T> warm_start_ray_terms(const P& p, int k, Vec3<T> vel, Vec3<T> free_vel,
                                                           const T* alpha, const T* beta) {
  T a, b[P::kFrictionCapacity];
  load_unknowns(p, k, alpha, beta, a, b);
  T ga, gb[P::kFrictionCapacity], fa, fb[P::kFrictionCapacity];
  contact_rows_of(p, k, vel, T(0), a, beta, ga, gb);
  // The rows at zero impulse: contact_rows_of's with alpha = beta = 0 (a tangential spring keeps its
  // force from the last step).
  fa = free_vel.x - p.rhs[k];
  friction_rows(p, add_tangential_spring(p, k, free_vel, T(0), T(0)), fb);
  RayTerms<T> t{a * fa, a * (ga - fa)};
  for (int j = 0; j < p.friction_dims; ++j) {
    t.slope += b[j] * fb[j];
    t.curvature += b[j] * (gb[j] - fb[j]);
  }
  return t;
}

// The island's scale s: -slope / curvature, not below 0 (a warm start pointing uphill from zero starts
// from zero); 1 where the ray is flat (no warm start) or the sums are not finite.
template <class T>
STAGGER_HD STAGGER_INLINE T warm_start_scale(RayTerms<T> t) {
  if (!(t.curvature > T(0))) return T(1);
  const T s = -t.slope / t.curvature;
  if (!(s == s) || s > T(1e30)) return T(1);
  return s > T(0) ? s : T(0);
}

}  // namespace stagger
