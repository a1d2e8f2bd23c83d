// The pieces of a primal-dual interior-point method on the Lorentz cone L = {v_0 >= |(v_1, v_2)|}
// (self-dual, so an impulse and its velocity rows live in the same cone): the cone's determinant, the
// Jordan product's arrow matrix and its inverse, the Nesterov-Todd scaling of a primal-dual pair, and
// the longest step that stays inside. Used by the exact solve of small islands (exact_ccp.cpp), where a
// contact's (mu a, t) is the primal and its velocity rows (v_n / mu, v_t) the dual.
//
// Near the answer sliding contacts have both members of their pair at the boundary, where the
// textbook formulas cancel to nothing: the determinant is taken as a product of a difference and a
// sum, and powers of the scaling are applied in its eigenbasis rather than as matrices.
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

namespace stagger {

// v_0^2 - |v_t|^2 as (v_0 - |v_t|)(v_0 + |v_t|).
inline double lorentz_det(const Eigen::Vector3d& v) {
  const double t = std::hypot(v[1], v[2]);
  return (v[0] - t) * (v[0] + t);
}

// The Jordan product u o v = arrow(u) v, and the v with u o v = d (u inside L).
inline Eigen::Vector3d jordan_product(const Eigen::Vector3d& u, const Eigen::Vector3d& v) {
  return Eigen::Vector3d(u.dot(v), u[0] * v[1] + v[0] * u[1], u[0] * v[2] + v[0] * u[2]);
}
inline Eigen::Vector3d jordan_solve(const Eigen::Vector3d& u, const Eigen::Vector3d& d) {
  const double v0 = (u[0] * d[0] - u[1] * d[1] - u[2] * d[2]) / lorentz_det(u);
  return Eigen::Vector3d(v0, (d[1] - v0 * u[1]) / u[0], (d[2] - v0 * u[2]) / u[0]);
}

// Nesterov-Todd scaling of a pair (s, z) inside L (Vandenberghe, "The CVXOPT linear and quadratic cone
// program solvers", section 4): the symmetric W with W z = W^-1 s = lambda, W = beta P with P J P = J
// (J = diag(1, -1, -1)). With wb the normalized scaling point (wb^T J wb = 1), P^2 = 2 wb wb^T - J: P's
// eigenvalues are k and 1 / k, k = wb_0 + |wb_t|, on e+- = (1, +-n) / sqrt(2), n = wb_t / |wb_t|, and 1
// across n. Near the answer k^2 reaches the inverse of the duality gap.
struct NtScaling {
  double beta = 1, k = 1, n[2] = {1, 0};
  Eigen::Vector3d lambda;

  NtScaling(const Eigen::Vector3d& s, const Eigen::Vector3d& z) {
    const double ns = std::sqrt(std::max(0.0, lorentz_det(s))), nz = std::sqrt(std::max(0.0, lorentz_det(z)));
    const Eigen::Vector3d sb = s / ns, zb = z / nz;
    const double gamma = std::sqrt(0.5 * (1 + zb.dot(sb)));
    const Eigen::Vector3d wb = Eigen::Vector3d(sb[0] + zb[0], sb[1] - zb[1], sb[2] - zb[2]) / (2 * gamma);
    beta = std::sqrt(ns / nz);
    const double rho = std::hypot(wb[1], wb[2]);
    k = wb[0] + rho;
    if (rho > 0) {
      n[0] = wb[1] / rho;
      n[1] = wb[2] / rho;
    }
    lambda = apply(1, z);
  }
  // W^p x, p = -2 ... 2, in the eigenbasis.
  Eigen::Vector3d apply(int p, const Eigen::Vector3d& x) const {
    const double nx = n[0] * x[1] + n[1] * x[2];
    const double plus = 0.5 * (x[0] + nx) * std::pow(k, p), minus = 0.5 * (x[0] - nx) * std::pow(k, -p);
    return std::pow(beta, p) * Eigen::Vector3d(plus + minus, (plus - minus) * n[0] + (x[1] - nx * n[0]),
                                               (plus - minus) * n[1] + (x[2] - nx * n[1]));
  }
  Eigen::Matrix3d matrix(int p) const {
    Eigen::Matrix3d m;
    for (int j = 0; j < 3; ++j) m.col(j) = apply(p, Eigen::Vector3d::Unit(j));
    return m;
  }
};

// The largest t <= cap with s + t ds in L (s inside): the first positive root of
// (s_0 + t ds_0)^2 - |s_t + t ds_t|^2, or of s_0 + t ds_0.
inline double step_to_boundary(const Eigen::Vector3d& s, const Eigen::Vector3d& ds, double cap) {
  double t = cap;
  if (ds[0] < 0) t = std::min(t, -s[0] / ds[0]);
  const double a = ds[0] * ds[0] - ds[1] * ds[1] - ds[2] * ds[2];
  const double b = s[0] * ds[0] - s[1] * ds[1] - s[2] * ds[2];
  const double c = lorentz_det(s);
  // a t^2 + 2 b t + c = 0: roots q / a and c / q with q = -(b + sign(b) sqrt(b^2 - a c)), no cancellation.
  const double disc = b * b - a * c;
  if (std::fabs(a) < 1e-300) {
    if (b < 0) t = std::min(t, -c / (2 * b));
  } else if (disc >= 0) {
    const double q = -(b + std::copysign(std::sqrt(disc), b));
    const double roots[2] = {q / a, q != 0 ? c / q : -1.0};
    for (double root : roots)
      if (root > 0) t = std::min(t, root);
  }
  return t;
}

}  // namespace stagger
