// The Delassus operator W = J M^-1 J^T applied matrix-free, as two element passes:
// (1) each body gathers the impulses of its contacts into a velocity, u = u^p + M^-1 J^T gamma;
// (2) each contact reads the velocities of its two bodies, J u (plus known kinematic velocities).
// The gradient of every QP of the solve stage is J u(gamma) - c on the rows it moves.
#pragma once

#include "problem_view.h"

namespace stagger {

// Friction impulse of contact k in its (t1, t2) frame, from its friction unknowns.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void tangent_impulse(const P& p, int k, const T* beta, T& b1, T& b2) {
  const T* bk = beta + k * p.friction_dims;
  if (!p.pyramid) {
    b1 = bk[0];
    b2 = bk[1];
  } else {
    b1 = b2 = T(0);
    for (int j = 0; j < p.friction_dims; ++j) {
      b1 += bk[j] * p.facet_cos[j];
      b2 += bk[j] * p.facet_sin[j];
    }
  }
}

// World-frame impulse on body A from contact k's unknowns held in registers.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Vec3<T> world_impulse(const P& p, int k, T alpha, const T* beta) {
  T b1, b2;
  if (!p.pyramid) {
    b1 = beta[0];
    b2 = beta[1];
  } else {
    b1 = b2 = T(0);
    for (int j = 0; j < p.friction_dims; ++j) {
      b1 += beta[j] * p.facet_cos[j];
      b2 += beta[j] * p.facet_sin[j];
    }
  }
  return alpha * p.normal[k] + b1 * p.tangent1[k] + b2 * p.tangent2[k];
}

// Pass (1) with the contacts' world impulses computed beforehand (once per contact, not per side).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void body_velocity_from_impulses(const P& p, int s, const Vec3<T>* impulse,
                                                           Vec3<T>& v, Vec3<T>& w) {
  Vec3<T> force = zero3<T>(), torque = zero3<T>();
  for (int i = p.incidence_begin[s]; i < p.incidence_begin[s + 1]; ++i) {
    int item = p.incidence[i];
    int k = item >> 1;
    Vec3<T> f = impulse[k];
    if ((item & 1) == 0) {
      force += f;
      torque += cross(p.r_a[k], f);
    } else {
      force -= f;
      torque -= cross(p.r_b[k], f);
    }
  }
  v = p.v_pred[s] + p.inv_mass[s] * force;
  w = p.w_pred[s] + p.inv_inertia[s] * torque;
}

// Pass (2): relative velocity of contact k in its frame, (n.w, t1.w, t2.w), w = w_A(p) - w_B(p).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Vec3<T> contact_velocity(const P& p, int k, const Vec3<T>* v, const Vec3<T>* w) {
  Vec3<T> rel = p.w_known[k];
  int a = p.slot_a[k], b = p.slot_b[k];
  if (a >= 0) rel += v[a] + cross(w[a], p.r_a[k]);
  if (b >= 0) rel -= v[b] + cross(w[b], p.r_b[k]);
  return {dot(p.normal[k], rel), dot(p.tangent1[k], rel), dot(p.tangent2[k], rel)};
}

// Contact k's velocity (n.w, t1.w, t2.w) as its friction rows see it: with a tangential spring
// (ProblemView::tangential_spring) the tangent part gains epsilon_t (beta_t - beta_prev), for the
// friction impulse (b1, b2) in the contact's frame.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Vec3<T> add_tangential_spring(const P& p, int k, Vec3<T> vel, T b1, T b2) {
  if (!p.tangential_compliance) return vel;
  const T e = p.tangential_compliance[k];
  vel.y += e * (b1 - p.tangential_spring[2 * k]);
  vel.z += e * (b2 - p.tangential_spring[2 * k + 1]);
  return vel;
}
// The same for contact k's friction unknowns in `beta` (the problem's layout).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Vec3<T> with_tangential_spring(const P& p, int k, Vec3<T> vel, const T* beta) {
  if (!p.tangential_compliance) return vel;
  T b1, b2;
  tangent_impulse(p, k, beta, b1, b2);
  return add_tangential_spring(p, k, vel, b1, b2);
}

// Friction rows of a contact velocity (t1.w, t2.w): the 2 cone rows or the m facet rows.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void friction_rows(const P& p, Vec3<T> vel, T* rows) {
  if (!p.pyramid) {
    rows[0] = vel.y;
    rows[1] = vel.z;
  } else {
    for (int j = 0; j < p.friction_dims; ++j) rows[j] = p.facet_cos[j] * vel.y + p.facet_sin[j] * vel.z;
  }
}

// Rows of contact k's velocity in the unknowns' layout: the normal row (minus c, plus the optional
// shift of successive relaxation, plus a compliant contact's epsilon alpha) and the friction rows (plus
// a tangential spring's term, for the friction unknowns in `beta`).
// Into registers: the normal row g_a and the friction rows g_b[0, friction_dims).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void contact_rows_of(const P& p, int k, Vec3<T> vel, T normal_shift, T alpha,
                                               const T* beta, T& g_a, T* g_b) {
  g_a = vel.x - p.rhs[k] + normal_shift;
  if (p.compliance) g_a += p.compliance[k] * alpha;
  friction_rows(p, with_tangential_spring(p, k, vel, beta), g_b);
}
// The same for a contact whose unknowns are all zero (one a working set holds, host/solve/staggered_batched.h),
// without the compliance term: it is zero, and adding it would turn a -0 row into +0, so that a rigid
// contact beside compliant bodies would no longer step as in a rigid scene (a test checks that, bit for bit).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void contact_rows_at_zero(const P& p, int k, Vec3<T> vel, T normal_shift, T& g_a, T* g_b) {
  g_a = vel.x - p.rhs[k] + normal_shift;
  friction_rows(p, add_tangential_spring(p, k, vel, T(0), T(0)), g_b);
}
// Into the gradient arrays g_alpha and g_beta (the problem's layout).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void contact_rows(const P& p, int k, Vec3<T> vel, T normal_shift, T alpha,
                                            const T* beta, T* g_alpha, T* g_beta) {
  T g_a;
  contact_rows_of(p, k, vel, normal_shift, alpha, beta, g_a, g_beta + k * p.friction_dims);
  g_alpha[k] = g_a;
}

// Diagonal entry of W for contact k's row along `dir` (from its bodies' inverse masses and inertias).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T delassus_row_norm(const P& p, int k, Vec3<T> dir) {
  T d = T(0);
  int a = p.slot_a[k], b = p.slot_b[k];
  if (a >= 0) {
    Vec3<T> rn = cross(p.r_a[k], dir);
    d += p.inv_mass[a] + dot(rn, p.inv_inertia[a] * rn);
  }
  if (b >= 0) {
    Vec3<T> rn = cross(p.r_b[k], dir);
    d += p.inv_mass[b] + dot(rn, p.inv_inertia[b] * rn);
  }
  return d;
}

// APGD's diagonal scales of contact k (kernels/apgd.h): the Delassus diagonal of its normal row and the
// larger of its tangent rows' (the two tangent rows share a scale, so that the friction disk stays a
// disk). Never zero: a contact touches at least one dynamic body. `w_nn`: the normal row's W_nn without
// its compliance (residual_velocity_weight's value, so that the step computes it once).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void delassus_scales(const P& p, int k, T& scale_n, T& scale_t, T& w_nn) {
  w_nn = delassus_row_norm(p, k, p.normal[k]);
  scale_n = w_nn;
  if (p.compliance) scale_n += p.compliance[k];
  scale_t = max_of(delassus_row_norm(p, k, p.tangent1[k]), delassus_row_norm(p, k, p.tangent2[k]));
  if (p.tangential_compliance) scale_t += p.tangential_compliance[k];
}

// The weight of contact k's normal row in the free velocity |b| that the solver's errors are relative
// to: W_nn / (W_nn + epsilon), 1 if rigid. A compliant row's free velocity -c is mostly the spring's
// term (c = -g k / (theta h k + d) grows as 1 / theta when the spring is taken near the step's start,
// kernels/problem_assembly.h), but its impulse moves the bodies by only c W_nn / (W_nn + epsilon), about
// h k |g| / m: the push they feel. Weighted so, |b| is the bodies' velocity scale and a relative
// tolerance means for a compliant bed what it means for a rigid one. Unweighted, a bed of beads at 10
// steps per contact had |b| 60 times the bodies' velocities and the solves stopped far too early: its
// slip errors kept it moving at 1 m/s, where the rigid bed comes to rest. (The residuals stay
// unweighted: weighting them too let the normal impulses stop short, and the friction bounds with them.)
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE T compliant_normal_weight(const P& p, int k) {
  if (!p.compliance) return T(1);
  const T e = p.compliance[k];
  const T d = p.scale_n ? p.scale_n[k] : delassus_row_norm(p, k, p.normal[k]) + e;  // W_nn + epsilon
  return (d - e) / d;
}

}  // namespace stagger
