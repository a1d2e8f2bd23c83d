// Exact Euclidean projections onto the convex sets of the contact and friction subproblems.
// Each is cheap and closed-form (or a sort of at most kMaxFacets numbers), so the projected-gradient
// iterations never solve a subproblem inside a subproblem.
#pragma once

#include "vec.h"

namespace stagger {

// Upper bound on pyramid facets: keeps per-thread scratch arrays on the stack in kernels.
constexpr int kMaxFacets = 32;

// Half-line alpha >= 0 (contact QP).
template <class T> STAGGER_HD STAGGER_INLINE T project_half_line(T x) { return x > T(0) ? x : T(0); }

// Disk ||b|| <= radius (friction QP, cone model); radius >= 0. Radial scaling is the exact projection.
template <class T> STAGGER_HD STAGGER_INLINE void project_disk(T& b1, T& b2, T radius) {
  // An open contact's disk (radius 0, three in four of a shaken bed's contacts): what the scaling below
  // gives, b times +0, bit for bit, without its square root and division.
  if (radius == T(0)) {
    b1 *= T(0);
    b2 *= T(0);
    return;
  }
  T n2 = b1 * b1 + b2 * b2;
  if (n2 <= radius * radius) return;
  T s = radius / sqrt_of(n2);  // n2 > radius^2 >= 0, so n2 > 0
  b1 *= s;
  b2 *= s;
}

// Sorts v[0..m) in decreasing order (insertion sort: m <= kMaxFacets, no allocation, no recursion).
template <class T> STAGGER_HD STAGGER_INLINE void sort_decreasing(T* v, int m) {
  for (int i = 1; i < m; ++i) {
    T key = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] < key) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = key;
  }
}

// Scaled simplex {b >= 0, sum(b) <= radius} (friction QP, pyramid model). Sort-and-threshold:
// if clipping negatives already satisfies the budget that is the answer, otherwise the answer is
// max(b - tau, 0) with tau chosen so that the sum is exactly radius.
template <class T> STAGGER_HD STAGGER_INLINE void project_scaled_simplex(T* b, int m, T radius) {
  T clipped_sum = T(0);
  for (int j = 0; j < m; ++j) clipped_sum += b[j] > T(0) ? b[j] : T(0);
  if (clipped_sum <= radius) {
    for (int j = 0; j < m; ++j) b[j] = project_half_line(b[j]);
    return;
  }
  T s[kMaxFacets];
  for (int j = 0; j < m; ++j) s[j] = b[j];
  sort_decreasing(s, m);
  // tau = (sum of the k largest - radius) / k for the largest k with s[k-1] > tau; k = 1 always
  // qualifies (it is the only one when radius = 0).
  T partial = s[0], tau = s[0] - radius;
  for (int k = 2; k <= m; ++k) {
    partial += s[k - 1];
    T t = (partial - radius) / T(k);
    if (s[k - 1] > t) tau = t;
    else break;
  }
  for (int j = 0; j < m; ++j) b[j] = b[j] - tau > T(0) ? b[j] - tau : T(0);
}

// Second-order cone {||b|| <= mu a} in (a, b1, b2) (the relaxed CCP problem, the natural-map error).
template <class T> STAGGER_HD STAGGER_INLINE void project_cone(T& a, T& b1, T& b2, T mu) {
  if (mu <= T(0)) {
    a = project_half_line(a);
    b1 = b2 = T(0);
    return;
  }
  T nb = sqrt_of(b1 * b1 + b2 * b2);
  if (nb <= mu * a) return;          // inside
  if (mu * nb <= -a) {               // inside the polar cone: projects to the apex
    a = b1 = b2 = T(0);
    return;
  }
  T a_new = (mu * nb + a) / (mu * mu + T(1));
  T s = mu * a_new / nb;             // nb > 0 here: nb = 0 would have been inside or polar
  a = a_new;
  b1 *= s;
  b2 *= s;
}

// Polyhedral cone {b >= 0, sum(b) <= mu a} in (a, b_1..b_m) (pyramid model). With multiplier
// lambda >= 0 of the sum constraint the projection is a + mu*lambda, max(b - lambda, 0), where
// h(lambda) = sum max(b_j - lambda, 0) - mu (a + mu lambda) is decreasing and piecewise linear:
// its root is found on the sorted breakpoints.
template <class T> STAGGER_HD STAGGER_INLINE void project_pyramid_cone(T& a, T* b, int m, T mu) {
  if (mu <= T(0)) {
    a = project_half_line(a);
    for (int j = 0; j < m; ++j) b[j] = T(0);
    return;
  }
  T clipped_sum = T(0);
  for (int j = 0; j < m; ++j) clipped_sum += b[j] > T(0) ? b[j] : T(0);
  if (clipped_sum <= mu * a) {
    for (int j = 0; j < m; ++j) b[j] = project_half_line(b[j]);
    return;
  }
  T s[kMaxFacets];
  for (int j = 0; j < m; ++j) s[j] = b[j];
  sort_decreasing(s, m);
  T partial = T(0), lambda = T(0);
  for (int k = 0; k <= m; ++k) {
    if (k > 0) partial += s[k - 1];
    T l = (partial - mu * a) / (T(k) + mu * mu);
    T next = k < m ? s[k] : l;  // the next breakpoint below the k active entries
    if (l >= next) {
      lambda = l;
      break;
    }
  }
  a = a + mu * lambda;
  for (int j = 0; j < m; ++j) b[j] = b[j] - lambda > T(0) ? b[j] - lambda : T(0);
}

}  // namespace stagger
