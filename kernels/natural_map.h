// The natural-map error of a contact (the FCLIB / Siconos measure, SOLVER.md): for the local problem
// v = W gamma + b, the residual gamma - P_K(gamma - v~), with v~ the De Saxce shifted velocity.
// It vanishes exactly at a Coulomb solution (normal complementarity, friction in the cone and
// maximally dissipative), so it is the outer loop's stopping test.
#pragma once

#include "delassus.h"
#include "projections.h"

namespace stagger {

// Shift of the normal velocity that turns the friction law into a cone complementarity:
// mu |v_t| for the cone; for the pyramid mu * lambda with lambda = max(0, max_j -v_tj), the slip
// rate of the pyramid's own complementarity conditions (with no shift the pyramid's natural map
// describes the relaxed CCP problem, whose solutions separate while sliding).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T coulomb_shift(const P& p, int k, const T* vt) {
  T mu = p.mu[k];
  if (!p.pyramid) return mu * sqrt_of(vt[0] * vt[0] + vt[1] * vt[1]);
  T slip = T(0);
  for (int j = 0; j < p.friction_dims; ++j) slip = max_of(slip, -vt[j]);
  return mu * slip;
}

// |gamma_k - P_K(gamma_k - v~_k)|^2 for contact k with unknowns a0, b0[0..friction_dims) (in registers)
// from its velocity rows: `vn` the normal row minus c, `vt` the friction rows; with `coulomb` the normal
// row is shifted by coulomb_shift first (else the relaxed problem's map). Where the view has residual
// weights (below), the impulses are the velocities they make: |w gamma_k - P_K(w gamma_k - v~_k)|^2.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T natural_map_residual2_of_values(const P& p, int k, T a0, const T* b0, T vn, const T* vt,
                                                            bool coulomb) {
  int m = p.friction_dims;
  // An open contact (no impulse) whose normal velocity does not close: its Coulomb map is the cone's
  // apex, so the residual is 0 (bit for bit what the projection below gives: mu |vt| <= vn + mu |vt|
  // holds after rounding too), without the two square roots. Most of a shaken bed's contacts in most
  // iterations: the margins take in neighbours that do not touch.
  if (coulomb && !p.pyramid && a0 == T(0) && b0[0] == T(0) && b0[1] == T(0) && vn >= T(0)) return T(0);
  vn = vn + (coulomb ? coulomb_shift(p, k, vt) : T(0));
  // With residual weights, the impulses as the velocities they make (residual_velocity_weight).
  T wb0[P::kFrictionCapacity];
  const T w = p.residual_weight ? p.residual_weight[k] : T(1);
  a0 *= w;
  for (int j = 0; j < m; ++j) wb0[j] = w * b0[j];
  b0 = wb0;
  T a = a0 - vn;
  T b[P::kFrictionCapacity];
  for (int j = 0; j < m; ++j) b[j] = b0[j] - vt[j];
  const T y_a = a;
  bool kept = true;  // whether the projection leaves gamma - v~ where it is
  if (p.pyramid) {
    T y_b[P::kFrictionCapacity];
    for (int j = 0; j < m; ++j) y_b[j] = b[j];
    project_pyramid_cone(a, b, m, p.mu[k]);
    for (int j = 0; j < m; ++j) kept = kept && b[j] == y_b[j];
  } else {
    const T y_b0 = b[0], y_b1 = b[1];
    project_cone(a, b[0], b[1], p.mu[k]);
    kept = b[0] == y_b0 && b[1] == y_b1;
  }
  kept = kept && a == y_a;
  // There the residual is v~ itself: gamma - (gamma - v~) would lose v~ to rounding where the
  // impulses dwarf it. A ball crushed between a wall and a kinematic piston (no solution: the
  // impulses grow without bound) was reported converged, with an error of exactly 0 at impulses
  // of 1e16 N s, while it was pushed through the wall.
  if (kept) {
    T r = square(vn);
    for (int j = 0; j < m; ++j) r += square(vt[j]);
    return r;
  }
  T r = square(a0 - a);
  for (int j = 0; j < m; ++j) r += square(b0[j] - b[j]);
  return r;
}
// The same from the arrays of unknowns (the problem's layout).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T natural_map_residual2_of_rows(const P& p, int k, const T* alpha,
                                                          const T* beta, T vn, const T* vt, bool coulomb) {
  return natural_map_residual2_of_values(p, k, alpha[k], beta + k * p.friction_dims, vn, vt, coulomb);
}

// The same for contact k with relative velocity `vel` (n.w, t1.w, t2.w).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T natural_map_residual2(const P& p, int k, const T* alpha, const T* beta,
                                                  Vec3<T> vel, bool coulomb) {
  T vt[P::kFrictionCapacity];
  friction_rows(p, with_tangential_spring(p, k, vel, beta), vt);
  T normal = vel.x - p.rhs[k];
  if (p.compliance) normal += p.compliance[k] * alpha[k];
  return natural_map_residual2_of_rows(p, k, alpha, beta, normal, vt, coulomb);
}

// The weight of contact k's residual in an island whose error is measured in velocities
// (error_in_velocities, host/scene/scene.h): its normal row's Delassus diagonal W_nn, the velocity a
// unit impulse gives its bodies (not its compliance, which is the spring's: as |b| weighs a compliant
// row by W_nn / (W_nn + epsilon), compliant_normal_weight, the push the bodies feel; with W_nn + epsilon
// the tight solve of a compliant bed took 4.4 times as long). w gamma - P_K(w gamma - v~) = w (gamma - P_K(gamma - v~ / w))
// (the cone is a cone) is the natural map with a step of 1 / w, which vanishes where FCLIB's (a step
// of 1) does, and is a velocity throughout. In FCLIB's, impulses in N s are
// compared with velocities in m/s: an island of 1 g bodies (impulses of mu m g h, 1e-5 N s) met a
// tolerance of 1e-4 with no friction at all and slid down its incline at g sin(theta), and a stack of
// 1 mm glass cubes (2.5 mg) returned friction 40 times its cone and fell.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T residual_velocity_weight(const P& p, int k) {
  return delassus_row_norm(p, k, p.normal[k]);
}

// b_floor of SOLVER.md, per row (m/s): errors are relative to |b|, except when the free velocity
// is essentially zero (bodies at rest with no load), where they become absolute at this scale.
constexpr double kFreeVelocityFloor = 1e-6;

// 1 / max(|b|, b_floor) of an island whose free velocity rows have squared norm `b2` over `rows` rows:
// what its summed squared residuals are scaled by (error = sqrt(sum) * scale).
template <class T>
STAGGER_HD STAGGER_INLINE T island_error_scale(T b2, int rows) {
  return T(1) / max_of(sqrt_of(b2), T(kFreeVelocityFloor) * sqrt_of(T(rows)));
}

// |b_k|^2: the free velocity rows (impulses zero), whose norm scales the island's errors (a compliant
// normal row weighted by compliant_normal_weight, kernels/delassus.h), twice (and the second's normal
// row alone): with the gaps, and
// `clipped`, where a speculative contact (c < 0: a gap the step may close) adds only the part of its
// free velocity that would close more than its gap, since -c = gap / h is no velocity of the bodies:
// with the envelope of a resting hexagonal pyramid's mesh (5% of its size) such rows made |b| a
// thousand times the bodies' speeds, and a relative error of 8e-5 let it sink 1.4 mm/s. An island's
// |b| takes both sums (island_free_norm2).
// `normal`: the clipped normal rows alone, the scale of an island whose error is measured in
// velocities (island_free_norm2).
template <class T>
struct FreeNorms2 {
  T with_gaps, clipped, normal;
};
template <class T>
STAGGER_HD STAGGER_INLINE FreeNorms2<T> operator+(FreeNorms2<T> a, FreeNorms2<T> b) {
  return {a.with_gaps + b.with_gaps, a.clipped + b.clipped, a.normal + b.normal};
}
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE FreeNorms2<T> free_velocity_norms2(const P& p, int k, Vec3<T> vel_free) {
  T vt[P::kFrictionCapacity];
  friction_rows(p, add_tangential_spring(p, k, vel_free, T(0), T(0)), vt);
  T tangential = T(0);
  for (int j = 0; j < p.friction_dims; ++j) tangential += square(vt[j]);
  const T normal = vel_free.x - p.rhs[k], weight = compliant_normal_weight(p, k);
  const T clipped = p.rhs[k] < T(0) ? min_of(normal, T(0)) : normal;
  return {square(weight * normal) + tangential, square(weight * clipped) + tangential, square(weight * clipped)};
}

// |b|^2 of an island from its contacts' summed free_velocity_norms2: the gaps count until |b| is
// `gap_cap` times its value without them (host/scene/scene.h, error_scale_gap_cap: 1 for structured
// islands, i.e. no gaps, and more for granular ones). An island whose error is measured in velocities
// (`in_velocities`, error_in_velocities) takes its normal rows alone: the friction rows' free velocity
// is the bodies' slip, which friction does not undo within a step but brakes by about mu g h per step.
// Relative to |b| with the slip, a ball sliding at 5 m/s with mu = 0.05 (mu g h = 4.9e-4 m/s at
// h = 1e-3) met 1e-4 with no friction and never rolled, and at h = 1e-5 a box on a conveyor never
// moved: the error allowed per step grew with the speed, and over 1 / h steps it added up to more
// than the friction. The normal rows carry the step's load (g h on a resting contact) and any impact.
template <class T>
STAGGER_HD STAGGER_INLINE T island_free_norm2(FreeNorms2<T> sums, T gap_cap, bool in_velocities) {
  if (in_velocities) return sums.normal;
  return min_of(sums.with_gaps, gap_cap * gap_cap * sums.clipped);
}

}  // namespace stagger
