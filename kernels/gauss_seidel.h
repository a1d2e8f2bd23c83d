// Gauss-Seidel sweeps over an island's contacts on the exact Coulomb problem (the NSGS of Jean and
// Moreau, which Siconos runs): each contact in turn solves its own three-unknown Coulomb problem with
// the other contacts' impulses held, and its bodies' velocities take the change at once, so the next
// contact sees it. The outer loop's polish (host/solve/staggered_batched.h, "polish"): near the answer
// the Tresca fixed point's map can stop contracting along a mode of sliding contacts coupled through
// their normal impulses (docs/benchmarks.md, the pouring pile's island), where a sweep still does.
// Cone friction only (the pyramid's local problem is not this one).
#pragma once

#include "delassus.h"
#include "projections.h"

namespace stagger {

// Contact k's 3x3 block of W in its frame (n, t1, t2), compliance diagonals included:
// W_ij = sum over its dynamic bodies of inv_mass d_i.d_j + (r x d_i) . I^-1 (r x d_j).
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Mat3<T> contact_delassus_block(const P& p, int k) {
  const Vec3<T> d[3] = {p.normal[k], p.tangent1[k], p.tangent2[k]};
  Mat3<T> m{zero3<T>(), zero3<T>(), zero3<T>()};
  for (int side = 0; side < 2; ++side) {
    const int s = side == 0 ? p.slot_a[k] : p.slot_b[k];
    if (s < 0) continue;
    const Vec3<T> r = side == 0 ? p.r_a[k] : p.r_b[k];
    Vec3<T> rd[3], ird[3];
    for (int i = 0; i < 3; ++i) {
      rd[i] = cross(r, d[i]);
      ird[i] = p.inv_inertia[s] * rd[i];
    }
    for (int i = 0; i < 3; ++i) {
      Vec3<T>& row = i == 0 ? m.r0 : (i == 1 ? m.r1 : m.r2);
      for (int j = 0; j < 3; ++j) row[j] += (i == j ? p.inv_mass[s] : T(0)) + dot(rd[i], ird[j]);
    }
  }
  if (p.compliance) m.r0.x += p.compliance[k];
  if (p.tangential_compliance) {
    m.r1.y += p.tangential_compliance[k];
    m.r2.z += p.tangential_compliance[k];
  }
  return m;
}

// min 1/2 x^T A x + r^T x over the disk |x| <= radius, A = [[a11, a12], [a12, a22]] positive definite:
// the unconstrained minimum if it lies inside, else x = -(A + lambda I)^-1 r on the circle, lambda > 0
// found by Newton's method on 1/|x(lambda)| - 1/radius (concave in lambda: monotone from 0).
template <class T>
STAGGER_HD STAGGER_INLINE void disk_qp(T a11, T a12, T a22, T r1, T r2, T radius, T& x1, T& x2) {
  if (!(radius > T(0))) {
    x1 = x2 = T(0);
    return;
  }
  const T det = a11 * a22 - a12 * a12;
  x1 = -(a22 * r1 - a12 * r2) / det;
  x2 = -(a11 * r2 - a12 * r1) / det;
  const T free_norm2 = x1 * x1 + x2 * x2;
  if (free_norm2 <= radius * radius) return;
  // A radius far below the free minimum's distance (a contact whose normal impulse is vanishing): the
  // minimum on so small a circle is where r points against, x = -radius r / |r|, to within radius^2 |A|
  // in the objective; Newton's method below would divide by the radius and overflow (Gauss-Seidel
  // sweeps over the demo bed met radii down to denormals: local_coulomb).
  const T r_norm = sqrt_of(r1 * r1 + r2 * r2);
  auto small_circle = [&] {
    x1 = -radius * r1 / r_norm;
    x2 = -radius * r2 / r_norm;
  };
  if (radius < T(1e-12) * sqrt_of(free_norm2)) {
    small_circle();
    return;
  }
  // A = Q diag(e) Q^T with Q the rotation by angle phi; s = Q^T r.
  const T half_trace = T(0.5) * (a11 + a22), half_diff = T(0.5) * (a11 - a22);
  const T root = sqrt_of(half_diff * half_diff + a12 * a12);
  const T e1 = half_trace + root, e2 = half_trace - root;
  T c = T(1), sn = T(0);
  if (root > T(0)) {  // eigenvector of e1: (a12, e1 - a11) or (e1 - a22, a12), the better conditioned
    T u1 = e1 - a22, u2 = a12;
    if (abs_of(a12) + abs_of(e1 - a11) > abs_of(u1) + abs_of(u2)) {
      u1 = a12;
      u2 = e1 - a11;
    }
    const T n = sqrt_of(u1 * u1 + u2 * u2);
    c = u1 / n;
    sn = u2 / n;
  }
  const T s1 = c * r1 + sn * r2, s2 = -sn * r1 + c * r2;
  T lambda = T(0);
  for (int it = 0; it < 40; ++it) {
    const T d1 = e1 + lambda, d2 = e2 + lambda;
    const T y1 = s1 / d1, y2 = s2 / d2;
    const T phi = sqrt_of(y1 * y1 + y2 * y2);
    const T slope = y1 * y1 / d1 + y2 * y2 / d2;  // -phi * dphi/dlambda
    const T step = (phi - radius) / radius * phi * phi / slope;
    lambda += step;
    if (!(abs_of(step) > T(1e-15) * (e1 + lambda))) break;
  }
  const T y1 = -s1 / (e1 + lambda), y2 = -s2 / (e2 + lambda);
  x1 = c * y1 - sn * y2;
  x2 = sn * y1 + c * y2;
  if (!(abs_of(x1) + abs_of(x2) <= T(2) * radius)) small_circle();  // not finite: the small-radius answer
  project_disk(x1, x2, radius);  // rounding: never outside
}

// Contact k's Coulomb problem with the other contacts held: its rows are u = W_kk gamma + q, and the
// new gamma = (a, b) has a >= 0 complementary to u_n and b maximally dissipative in the disk mu a.
// Solved by alternating the two: exact in one pass where W_kk couples no normal and tangent rows (a
// sphere's contacts), a linear contraction with the coupling otherwise (a box's corner), cut off at
// kLocalCoulombPasses.
// A pass that changes the impulses by less than `floor`, impulses that would move the contact's
// velocity by 1e-14 of its free velocity q, ends it too: otherwise an opening contact (q_n = 0, a
// vanishing coupling) alternates a and b down through every decade to denormals (the demo bed met one).
constexpr int kLocalCoulombPasses = 50;
template <class T>
STAGGER_HD STAGGER_INLINE void local_coulomb(const Mat3<T>& m, Vec3<T> q, T mu, T& a, T& b1, T& b2) {
  const T floor = (abs_of(q.x) + abs_of(q.y) + abs_of(q.z)) / max_of(m.r0.x, max_of(m.r1.y, m.r2.z));
  for (int pass = 0; pass < kLocalCoulombPasses; ++pass) {
    const T a_new = project_half_line(-(q.x + m.r0.y * b1 + m.r0.z * b2) / m.r0.x);
    T c1, c2;
    disk_qp(m.r1.y, m.r1.z, m.r2.z, q.y + m.r1.x * a_new, q.z + m.r2.x * a_new, mu * a_new, c1, c2);
    const T change = abs_of(a_new - a) + abs_of(c1 - b1) + abs_of(c2 - b2);
    const T size = abs_of(a_new) + abs_of(c1) + abs_of(c2);
    a = a_new;
    b1 = c1;
    b2 = c2;
    if (!(change > T(1e-14) * (size + floor))) break;
  }
}

// One contact's Gauss-Seidel update: solve its local problem from the bodies' current velocities v, w
// and move them by the impulse's change.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void gauss_seidel_contact(const P& p, int k, T* alpha, T* beta, Vec3<T>* v, Vec3<T>* w) {
  static_assert(P::kFrictionCapacity == 2, "the cone's view (ConeView): two friction unknowns per contact");
  const T a0 = alpha[k], b01 = beta[2 * k], b02 = beta[2 * k + 1];
  T g_n, g_t[2];
  contact_rows_of(p, k, contact_velocity(p, k, v, w), T(0), a0, beta, g_n, g_t);
  const Mat3<T> m = contact_delassus_block(p, k);
  const Vec3<T> gamma0{a0, b01, b02};
  const Vec3<T> q = Vec3<T>{g_n, g_t[0], g_t[1]} - m * gamma0;
  T a = a0, b1 = b01, b2 = b02;
  local_coulomb(m, q, p.mu[k], a, b1, b2);
  alpha[k] = a;
  beta[2 * k] = b1;
  beta[2 * k + 1] = b2;
  const Vec3<T> df = (a - a0) * p.normal[k] + (b1 - b01) * p.tangent1[k] + (b2 - b02) * p.tangent2[k];
  const int sa = p.slot_a[k], sb = p.slot_b[k];
  if (sa >= 0) {
    v[sa] += p.inv_mass[sa] * df;
    w[sa] += p.inv_inertia[sa] * cross(p.r_a[k], df);
  }
  if (sb >= 0) {
    v[sb] -= p.inv_mass[sb] * df;
    w[sb] -= p.inv_inertia[sb] * cross(p.r_b[k], df);
  }
}

// `sweeps` sweeps over island i's contacts in their order; v, w must be the velocities of the
// impulses alpha, beta on entry and are on exit.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE void gauss_seidel_sweeps(const P& p, int i, int sweeps, T* alpha, T* beta, Vec3<T>* v,
                                                   Vec3<T>* w) {
  const int begin = p.island_contact_begin[i], end = p.island_contact_begin[i + 1];
  for (int s = 0; s < sweeps; ++s)
    for (int k = begin; k < end; ++k) gauss_seidel_contact(p, k, alpha, beta, v, w);
}

}  // namespace stagger
