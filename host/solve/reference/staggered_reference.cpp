#include "staggered_reference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

#include <Eigen/Dense>
#include <Eigen/Sparse>

#include "kernels/feasible_sets.h"
#include "kernels/natural_map.h"
#include "kernels/projections.h"

namespace stagger {

namespace {

using Eigen::VectorXd;
using Sparse = Eigen::SparseMatrix<double>;
using Triplet = Eigen::Triplet<double>;
using Projection = std::function<void(VectorXd&)>;

constexpr double kFreeVelocityFloor = 1e-6;  // b_floor per row, as in the batched backend

// One island's assembled problem: unknowns gamma = (alpha_1..alpha_n, beta_1..beta_n) and
// v = W gamma + b (normal rows minus c).
struct IslandProblem {
  int nc = 0, nt = 2;
  bool pyramid = false;
  std::vector<double> mu, facet_cos, facet_sin;
  Sparse jn, jt, minv;        // J_n (nc x 6nb), J_t (nc nt x 6nb), M^-1
  Sparse wnn, wnt, wtn, wtt;  // blocks of W
  VectorXd bn, bt, up;        // free velocities and u^p
  // Weights of the normal rows in |b|: W_nn / (W_nn + epsilon) of a compliant contact, else 1
  // (kernels/delassus.h, compliant_normal_weight, says why).
  VectorXd wn;
  // Per contact, whether it is speculative (c < 0): its normal row adds to |b| without its gap only
  // the part of the free velocity that would close more than the gap, and |b| is then
  // island_free_norm2 of both sums with the island's gap_cap (kernels/natural_map.h; host/scene/scene.h,
  // error_scale_gap_cap). Empty: the gaps count in full (an FCLIB problem's q, which keeps FCLIB's own
  // measure).
  std::vector<char> speculative;
  double gap_cap = 1;
  // Per contact, what its natural-map residual is multiplied by: W_nn (without its compliance) where the
  // island's error is measured in velocities (error_in_velocities, host/scene/scene.h; kernels/natural_map.h
  // says why), and |b| then takes the normal rows alone. Empty: FCLIB's measure.
  VectorXd residual_weight;
  double scale = 1;           // 1 / max(|b|, b_floor)
};

void set_scale(IslandProblem& ip) {
  VectorXd bn = ip.bn;
  const double with_gaps = bn.cwiseProduct(ip.wn).squaredNorm() + ip.bt.squaredNorm();
  for (int k = 0; k < int(ip.speculative.size()); ++k)
    if (ip.speculative[k]) bn[k] = std::min(bn[k], 0.0);
  const double normal = bn.cwiseProduct(ip.wn).squaredNorm(), clipped = normal + ip.bt.squaredNorm();
  const double bnorm = std::sqrt(
      island_free_norm2(FreeNorms2<double>{with_gaps, clipped, normal}, ip.gap_cap, ip.residual_weight.size() > 0));
  ip.scale = 1.0 / std::max(bnorm, kFreeVelocityFloor * std::sqrt(double(ip.nc * (1 + ip.nt))));
}

IslandProblem assemble(const ContactProblem& p, int island) {
  IslandProblem ip;
  const int c0 = p.island_contact_begin[island], c1 = p.island_contact_begin[island + 1];
  ip.gap_cap = error_scale_gap_cap(c1 - c0);
  const int s0 = p.island_body_begin[island], s1 = p.island_body_begin[island + 1];
  ip.nc = c1 - c0;
  ip.nt = p.friction_dims;
  ip.pyramid = p.pyramid;
  ip.facet_cos = p.facet_cos;
  ip.facet_sin = p.facet_sin;
  const int nb = s1 - s0, nc = ip.nc, nt = ip.nt;

  // Friction directions of each contact: t1, t2 (cone) or d_j = cos_j t1 + sin_j t2 (pyramid).
  auto direction = [&](int k, int j) {
    if (!p.pyramid) return j == 0 ? p.tangent1[k] : p.tangent2[k];
    return p.facet_cos[j] * p.tangent1[k] + p.facet_sin[j] * p.tangent2[k];
  };
  std::vector<Triplet> tn, tt;
  auto add_row = [&](std::vector<Triplet>& t, int row, int k, Vec3d dir) {
    if (p.slot_a[k] >= 0) {
      int col = 6 * (p.slot_a[k] - s0);
      Vec3d ang = cross(p.r_a[k], dir);
      for (int d = 0; d < 3; ++d) {
        t.emplace_back(row, col + d, dir[d]);
        t.emplace_back(row, col + 3 + d, ang[d]);
      }
    }
    if (p.slot_b[k] >= 0) {
      int col = 6 * (p.slot_b[k] - s0);
      Vec3d ang = cross(p.r_b[k], dir);
      for (int d = 0; d < 3; ++d) {
        t.emplace_back(row, col + d, -dir[d]);
        t.emplace_back(row, col + 3 + d, -ang[d]);
      }
    }
  };
  ip.bn.resize(nc);
  ip.bt.resize(nc * nt);
  for (int k = c0; k < c1; ++k) {
    int local = k - c0;
    add_row(tn, local, k, p.normal[k]);
    ip.bn[local] = dot(p.normal[k], p.w_known[k]) - p.rhs[k];
    ip.speculative.push_back(p.rhs[k] < 0);
    for (int j = 0; j < nt; ++j) {
      add_row(tt, local * nt + j, k, direction(k, j));
      ip.bt[local * nt + j] = dot(direction(k, j), p.w_known[k]);
    }
    ip.mu.push_back(p.mu[k]);
  }
  ip.jn.resize(nc, 6 * nb);
  ip.jn.setFromTriplets(tn.begin(), tn.end());
  ip.jt.resize(nc * nt, 6 * nb);
  ip.jt.setFromTriplets(tt.begin(), tt.end());

  std::vector<Triplet> tm;
  ip.up.resize(6 * nb);
  for (int s = s0; s < s1; ++s) {
    int o = 6 * (s - s0);
    for (int d = 0; d < 3; ++d) {
      tm.emplace_back(o + d, o + d, p.inv_mass[s]);
      ip.up[o + d] = p.v_pred[s][d];
      ip.up[o + 3 + d] = p.w_pred[s][d];
      for (int e = 0; e < 3; ++e) tm.emplace_back(o + 3 + d, o + 3 + e, p.inv_inertia[s].row(d)[e]);
    }
  }
  ip.minv.resize(6 * nb, 6 * nb);
  ip.minv.setFromTriplets(tm.begin(), tm.end());

  ip.bn += ip.jn * ip.up;
  ip.bt += ip.jt * ip.up;
  Sparse minv_jnt = ip.minv * Sparse(ip.jn.transpose());
  Sparse minv_jtt = ip.minv * Sparse(ip.jt.transpose());
  ip.wnn = ip.jn * minv_jnt;
  if (error_in_velocities(nc)) ip.residual_weight = ip.wnn.diagonal();  // W_nn, before the compliance
  ip.wn = VectorXd::Ones(nc);
  if (!p.compliance.empty()) {  // compliant contacts: epsilon on the normal rows' diagonal (kernels/problem_assembly.h)
    for (int k = c0; k < c1; ++k) {
      const double w = ip.wnn.coeff(k - c0, k - c0);
      ip.wn[k - c0] = w / (w + p.compliance[k]);
    }
    std::vector<Triplet> te;
    for (int k = c0; k < c1; ++k) te.emplace_back(k - c0, k - c0, p.compliance[k]);
    Sparse eps(nc, nc);
    eps.setFromTriplets(te.begin(), te.end());
    ip.wnn += eps;
  }
  ip.wnt = ip.jn * minv_jtt;
  ip.wtn = ip.jt * minv_jnt;
  ip.wtt = ip.jt * minv_jtt;
  if (!p.tangential_spring.empty()) {
    // Tangential springs (kernels/problem_assembly.h): the friction rows gain epsilon_t (beta_t - beta_prev),
    // beta_t = D beta with D's columns the friction directions in (t1, t2): epsilon_t D'D on the
    // diagonal block, -epsilon_t D' beta_prev in the free velocity.
    std::vector<Triplet> te;
    for (int k = c0; k < c1; ++k) {
      const int local = k - c0;
      const double e = p.tangential_compliance[k];
      const Vec3d t1 = p.tangent1[k], t2 = p.tangent2[k];
      for (int j = 0; j < nt; ++j) {
        const Vec3d dj = direction(k, j);
        ip.bt[local * nt + j] -= e * (dot(dj, t1) * p.tangential_spring[2 * k] + dot(dj, t2) * p.tangential_spring[2 * k + 1]);
        for (int l = 0; l < nt; ++l) te.emplace_back(local * nt + j, local * nt + l, e * dot(dj, direction(k, l)));
      }
    }
    Sparse eps(nc * nt, nc * nt);
    eps.setFromTriplets(te.begin(), te.end());
    ip.wtt += eps;
  }
  set_scale(ip);
  return ip;
}

// Largest eigenvalue of a symmetric positive semidefinite A, from below (power iterations).
double power_estimate(const Sparse& a) {
  if (a.rows() == 0) return 1.0;
  VectorXd v = VectorXd::Ones(a.rows()).normalized();
  double lambda = 0;
  for (int i = 0; i < 20; ++i) {
    VectorXd w = a * v;
    lambda = w.norm();
    if (lambda <= 0) return std::numeric_limits<double>::min();
    v = w / lambda;
  }
  return lambda;
}

// The residual weights of a QP's unknowns (IslandProblem::residual_weight; empty when it has none): of
// the normal impulses, of the friction impulses (nt per contact), and of both, gamma = (alpha, beta).
VectorXd normal_weights(const IslandProblem& ip) { return ip.residual_weight; }
VectorXd friction_weights(const IslandProblem& ip) {
  if (ip.residual_weight.size() == 0) return {};
  VectorXd w(ip.nc * ip.nt);
  for (int k = 0; k < ip.nc; ++k) w.segment(k * ip.nt, ip.nt).setConstant(ip.residual_weight[k]);
  return w;
}
VectorXd joint_weights(const IslandProblem& ip) {
  if (ip.residual_weight.size() == 0) return {};
  VectorXd w(ip.nc * (1 + ip.nt));
  w << ip.residual_weight, friction_weights(ip);
  return w;
}

struct QpOutcome {
  VectorXd x;
  int iterations = 0;
  double lipschitz = 0;
};

// APGD exactly as SOLVER.md writes it: min 1/2 x'Ax + x'r over the set of `project`, stopped by the
// projected-gradient residual, or by `stop` when given (Coulomb APGD: the natural-map error). With
// `weight` (per unknown, its contact's residual weight; empty: 1) the residual is the one of the island's
// error in velocities, |D (x - P(x - D^-1 g))|.
using StopMeasure = std::function<double(const VectorXd&)>;
QpOutcome apgd(const Sparse& a, const VectorXd& r, VectorXd x, const Projection& project, double tolerance,
               double scale, const VectorXd& weight, int max_iterations, double lipschitz,
               const StopMeasure& stop = nullptr) {
  auto f = [&](const VectorXd& z) { return 0.5 * z.dot(a * z) + z.dot(r); };
  auto residual = [&](const VectorXd& z) {
    if (stop) return stop(z);
    if (weight.size() == 0) {
      VectorXd step = z - (a * z + r);
      project(step);
      return (z - step).norm() * scale;
    }
    VectorXd step = z - (a * z + r).cwiseQuotient(weight);
    project(step);
    return (z - step).cwiseProduct(weight).norm() * scale;
  };
  project(x);
  QpOutcome out;
  out.x = x;
  double best = residual(x);
  double L = lipschitz, theta = 1;
  VectorXd y = x;
  if (best <= tolerance && !stop) {  // Coulomb APGD takes at least one step (as the batched solver does)
    out.lipschitz = L;
    return out;
  }
  for (int it = 1; it <= max_iterations; ++it) {
    VectorXd g = a * y + r;
    VectorXd xp = y - g / L;
    project(xp);
    double fy = f(y);
    for (int backtrack = 0; backtrack < 60; ++backtrack) {
      VectorXd d = xp - y;
      double bound = fy + g.dot(d) + 0.5 * L * d.squaredNorm();
      if (f(xp) <= bound + 1e-13 * (std::fabs(fy) + std::fabs(bound))) break;  // slack for rounding only
      L *= 2;
      xp = y - g / L;
      project(xp);
    }
    double theta_next = (-theta * theta + theta * std::sqrt(theta * theta + 4)) / 2;
    double b = theta * (1 - theta) / (theta * theta + theta_next);
    if (g.dot(xp - x) > 0) {
      y = xp;
      theta_next = 1;
    } else {
      y = xp + b * (xp - x);
    }
    x = xp;
    theta = theta_next;
    L *= 0.9;
    out.iterations = it;
    double res = residual(x);
    if (res < best) {
      best = res;
      out.x = x;
    }
    if (!(res > tolerance)) break;
  }
  out.lipschitz = L;
  return out;
}

// Natural-map error of (alpha, beta) on the island, with v = W gamma + b (+ shift on normal rows).
double natural_map_error(const IslandProblem& ip, const VectorXd& alpha, const VectorXd& beta) {
  const VectorXd vn = ip.wnn * alpha + ip.wnt * beta + ip.bn;
  const VectorXd vt = ip.wtn * alpha + ip.wtt * beta + ip.bt;
  double sum = 0;
  const int nt = ip.nt;
  for (int k = 0; k < ip.nc; ++k) {
    // Written out again here on purpose: the oracle does not share the batched backend's error code.
    double rows[kMaxFacets] = {};
    for (int j = 0; j < nt; ++j) rows[j] = vt[k * nt + j];
    double shift;
    if (!ip.pyramid) {
      shift = ip.mu[k] * std::sqrt(rows[0] * rows[0] + rows[1] * rows[1]);
    } else {
      double slip = 0;
      for (int j = 0; j < nt; ++j) slip = std::max(slip, -rows[j]);
      shift = ip.mu[k] * slip;
    }
    // With residual weights, the impulses as the velocities they make.
    const double w = ip.residual_weight.size() > 0 ? ip.residual_weight[k] : 1.0;
    double a0 = w * alpha[k], a = a0 - (vn[k] + shift);
    double b0[kMaxFacets], b[kMaxFacets];
    for (int j = 0; j < nt; ++j) {
      b0[j] = w * beta[k * nt + j];
      b[j] = b0[j] - rows[j];
    }
    if (ip.pyramid) project_pyramid_cone(a, b, nt, ip.mu[k]);
    else project_cone(a, b[0], b[1], ip.mu[k]);
    sum += (a0 - a) * (a0 - a);
    for (int j = 0; j < nt; ++j) sum += (b0[j] - b[j]) * (b0[j] - b[j]);
  }
  return std::sqrt(sum) * ip.scale;
}

Projection contact_set() {
  return [](VectorXd& x) { x = x.cwiseMax(0.0); };
}

Projection friction_set(const IslandProblem& ip, const VectorXd& alpha) {
  return [&ip, alpha](VectorXd& b) {
    for (int k = 0; k < ip.nc; ++k) {
      double radius = ip.mu[k] * std::max(alpha[k], 0.0);
      if (ip.pyramid) project_scaled_simplex(b.data() + k * ip.nt, ip.nt, radius);
      else project_disk(b[k * ip.nt], b[k * ip.nt + 1], radius);
    }
  };
}

// The relaxed (CCP) set over gamma = (alpha; beta): a cone or pyramid per contact.
Projection cone_set(const IslandProblem& ip) {
  return [&ip](VectorXd& g) {
    const int nc = ip.nc, nt = ip.nt;
    for (int k = 0; k < nc; ++k) {
      double* b = g.data() + nc + k * nt;
      if (ip.pyramid) project_pyramid_cone(g[k], b, nt, ip.mu[k]);
      else project_cone(g[k], b[0], b[1], ip.mu[k]);
    }
  };
}

struct IslandSolution {
  VectorXd alpha, beta;
  IslandStats stats;  // stats.error: the best error seen so far, which `offer` keeps
  double lipschitz_contact = 0, lipschitz_friction = 0;

  IslandSolution(VectorXd a, VectorXd b) : alpha(std::move(a)), beta(std::move(b)) {
    stats.error = std::numeric_limits<double>::infinity();
  }
  // An outer iterate with its error: errors are not monotone over outer iterations, so the pair
  // returned is the best one seen. True when it is the best so far.
  bool offer(double err, const VectorXd& a, const VectorXd& b) {
    if (!(err < stats.error)) return false;
    stats.error = err;
    alpha = a;
    beta = b;
    return true;
  }
};

IslandSolution solve_staggered(const IslandProblem& ip, VectorXd alpha, VectorXd beta, const SolverSettings& s,
                               const SolveControls& c) {
  IslandSolution out(alpha, beta);
  double lc = power_estimate(ip.wnn), lf = power_estimate(ip.wtt);
  // First inner tolerance from the warm start's error, floored at the outer tolerance (as the batched
  // backend; docs/method.md).
  double err = std::max(natural_map_error(ip, alpha, beta), s.tolerance);
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    double tau = c.adaptive_inner_tolerance ? inner_tolerance_for(s, err) : s.inner_tolerance;
    QpOutcome qc = apgd(ip.wnn, ip.bn + ip.wnt * beta, alpha, contact_set(), tau, ip.scale, normal_weights(ip), s.max_inner_iterations, lc);
    alpha = qc.x;
    lc = qc.lipschitz;
    out.stats.inner_iterations += qc.iterations;
    out.stats.outer_iterations = it;
    err = natural_map_error(ip, alpha, beta);
    out.offer(err, alpha, beta);
    if (err <= s.tolerance) {
      out.stats.converged = true;
      break;
    }
    QpOutcome qf = apgd(ip.wtt, ip.bt + ip.wtn * alpha, beta, friction_set(ip, alpha), tau, ip.scale, friction_weights(ip),
                        s.max_inner_iterations, lf);
    beta = qf.x;
    lf = qf.lipschitz;
    out.stats.inner_iterations += qf.iterations;
  }
  out.lipschitz_contact = lc;
  out.lipschitz_friction = lf;
  return out;
}

// All of W, over gamma = (alpha; beta).
Sparse whole_delassus(const IslandProblem& ip) {
  const int nc = ip.nc, nt = ip.nt;
  Sparse w(nc * (1 + nt), nc * (1 + nt));
  std::vector<Triplet> t;
  auto put = [&](const Sparse& m, int r0, int c0) {
    for (int col = 0; col < m.outerSize(); ++col)
      for (Sparse::InnerIterator it(m, col); it; ++it) t.emplace_back(r0 + it.row(), c0 + it.col(), it.value());
  };
  put(ip.wnn, 0, 0);
  put(ip.wnt, 0, nc);
  put(ip.wtn, nc, 0);
  put(ip.wtt, nc, nc);
  w.setFromTriplets(t.begin(), t.end());
  return w;
}

VectorXd stacked(const VectorXd& top, const VectorXd& bottom) {
  VectorXd v(top.size() + bottom.size());
  v << top, bottom;
  return v;
}

// The QP over gamma = (alpha; beta) with all of W (the Tresca fixed point, Coulomb APGD and the relaxed
// problem), and APGD's first Lipschitz estimate for it.
struct JointQp {
  Sparse w;
  VectorXd b;
  double lipschitz;
  explicit JointQp(const IslandProblem& ip)
      : w(whole_delassus(ip)), b(stacked(ip.bn, ip.bt)), lipschitz(power_estimate(w)) {}
};

// alpha >= 0 over gamma = (alpha; beta), then each friction into the disk (simplex) of mu times
// `radius_alpha`'s entry (the Tresca QP's radii), or, when null, of the alpha just projected (Coulomb
// APGD's clamp).
void project_normal_then_friction(const IslandProblem& ip, VectorXd& g, const VectorXd* radius_alpha) {
  const int nc = ip.nc, nt = ip.nt;
  g.head(nc) = g.head(nc).cwiseMax(0.0);
  VectorXd f = g.tail(nc * nt);
  friction_set(ip, radius_alpha ? *radius_alpha : VectorXd(g.head(nc)))(f);
  g.tail(nc * nt) = f;
}

// The Tresca fixed point: per outer iteration one QP over gamma with alpha >= 0 and beta in the
// friction set of the previous alpha (held fixed during the QP); stops on the Coulomb error.
IslandSolution solve_tresca(const IslandProblem& ip, VectorXd alpha, VectorXd beta, const SolverSettings& s,
                            const SolveControls& c) {
  const int nc = ip.nc, nt = ip.nt;
  const JointQp qp(ip);
  VectorXd gamma = stacked(alpha, beta);
  double L = qp.lipschitz;
  IslandSolution out(alpha, beta);
  double err = std::max(natural_map_error(ip, alpha, beta), s.tolerance);
  VectorXd bound_alpha = alpha.cwiseMax(0.0);  // friction radii / mu
  bool stalled = false;
  int unimproved = 0;  // outer iterations since the error last improved (tresca_bound_weight)
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    const double tau = c.adaptive_inner_tolerance ? inner_tolerance_for(s, err, stalled) : s.inner_tolerance;
    const Projection tresca = [&](VectorXd& g) { project_normal_then_friction(ip, g, &bound_alpha); };
    QpOutcome q = apgd(qp.w, qp.b, gamma, tresca, tau, ip.scale, joint_weights(ip), s.max_inner_iterations, L);
    gamma = q.x;
    L = q.lipschitz;
    out.stats.inner_iterations += q.iterations;
    out.stats.outer_iterations = it;
    err = natural_map_error(ip, gamma.head(nc), gamma.tail(nc * nt));
    stalled = stalled || outer_error_stalled(out.stats.error, err);
    const bool improved = out.offer(err, gamma.head(nc), gamma.tail(nc * nt));
    if (err <= s.tolerance) {
      out.stats.converged = true;
      break;
    }
    unimproved = improved ? 0 : unimproved + 1;
    const double weight = tresca_bound_weight(unimproved);
    bound_alpha = (1 - weight) * bound_alpha + weight * gamma.head(nc).cwiseMax(0.0);
  }
  out.lipschitz_contact = L;
  return out;
}

// Coulomb APGD: APGD over gamma whose projection clamps each friction to mu times its own (projected)
// alpha, stopped by the natural-map error; another outer iteration restarts it from the best point.
IslandSolution solve_coulomb_apgd(const IslandProblem& ip, VectorXd alpha, VectorXd beta, const SolverSettings& s) {
  const int nc = ip.nc, nt = ip.nt;
  const JointQp qp(ip);
  VectorXd gamma = stacked(alpha, beta);
  double L = qp.lipschitz;
  IslandSolution out(alpha, beta);
  const Projection coulomb = [&](VectorXd& g) { project_normal_then_friction(ip, g, nullptr); };
  const StopMeasure error = [&](const VectorXd& g) { return natural_map_error(ip, g.head(nc), g.tail(nc * nt)); };
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    QpOutcome q = apgd(qp.w, qp.b, gamma, coulomb, s.tolerance, ip.scale, joint_weights(ip), s.max_inner_iterations, L, error);
    gamma = q.x;
    L = q.lipschitz;
    out.stats.inner_iterations += q.iterations;
    out.stats.outer_iterations = it;
    const double err = error(gamma);
    out.offer(err, gamma.head(nc), gamma.tail(nc * nt));
    if (err <= s.tolerance) {
      out.stats.converged = true;
      break;
    }
  }
  out.lipschitz_contact = L;
  return out;
}

// The relaxed problem over all of W; `shifted` runs Anitescu-Hart's successive relaxation around it.
IslandSolution solve_relaxed(const IslandProblem& ip, VectorXd alpha, VectorXd beta, const SolverSettings& s,
                             bool shifted) {
  const int nc = ip.nc, nt = ip.nt;
  const JointQp qp(ip);
  VectorXd gamma = stacked(alpha, beta);
  double L = qp.lipschitz;
  IslandSolution out(alpha, beta);
  auto tangential_shift = [&](const VectorXd& g) {
    VectorXd v = qp.w * g + qp.b, shift = VectorXd::Zero(nc * (1 + nt));
    for (int k = 0; k < nc; ++k) {
      if (!ip.pyramid) {
        shift[k] = ip.mu[k] * std::hypot(v[nc + k * nt], v[nc + k * nt + 1]);
      } else {
        double slip = 0;
        for (int j = 0; j < nt; ++j) slip = std::max(slip, -v[nc + k * nt + j]);
        shift[k] = ip.mu[k] * slip;
      }
    }
    return shift;
  };
  if (!shifted) {
    long long budget = std::min<long long>(1LL * s.max_inner_iterations * s.max_outer_iterations, 1 << 30);
    QpOutcome q = apgd(qp.w, qp.b, gamma, cone_set(ip), s.tolerance, ip.scale, joint_weights(ip), int(budget), L);
    VectorXd check = q.x - (qp.w * q.x + qp.b);
    cone_set(ip)(check);
    out.stats.converged = (q.x - check).norm() * ip.scale <= s.tolerance;
    out.stats.outer_iterations = 1;
    out.stats.inner_iterations = q.iterations;
    out.alpha = q.x.head(nc);
    out.beta = q.x.tail(nc * nt);
    out.stats.error = natural_map_error(ip, out.alpha, out.beta);
    out.lipschitz_contact = q.lipschitz;
    return out;
  }
  double err = natural_map_error(ip, alpha, beta);
  VectorXd shift = tangential_shift(gamma);
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    double tau = inner_tolerance_for(s, err);
    QpOutcome q = apgd(qp.w, qp.b + shift, gamma, cone_set(ip), tau, ip.scale, joint_weights(ip), s.max_inner_iterations, L);
    gamma = q.x;
    L = q.lipschitz;
    out.stats.inner_iterations += q.iterations;
    out.stats.outer_iterations = it;
    err = natural_map_error(ip, gamma.head(nc), gamma.tail(nc * nt));
    out.offer(err, gamma.head(nc), gamma.tail(nc * nt));
    if (err <= s.tolerance) {
      out.stats.converged = true;
      break;
    }
    shift = tangential_shift(gamma);
  }
  out.lipschitz_contact = L;
  return out;
}

// One island by the scene's method (or the one "auto" picks for it), from the warm start (alpha, beta).
IslandSolution solve_island(const IslandProblem& ip, const VectorXd& alpha, const VectorXd& beta,
                            const SolverSettings& scene_settings, double friction_share,
                            const SolveControls& controls) {
  const SolverSettings settings = island_settings(scene_settings, ip.nc, friction_share);
  switch (settings.method) {
    case Method::staggered: return solve_staggered(ip, alpha, beta, settings, controls);
    case Method::ccp: return solve_relaxed(ip, alpha, beta, settings, false);
    case Method::successive_relaxation: return solve_relaxed(ip, alpha, beta, settings, true);
    case Method::tresca_fixed_point: return solve_tresca(ip, alpha, beta, settings, controls);
    case Method::coulomb_apgd: return solve_coulomb_apgd(ip, alpha, beta, settings);
    case Method::automatic: break;  // resolved by island_settings
  }
  throw std::logic_error("unknown solver method");
}

// FCLIB's layout: contact k's normal row at 3k, its tangent rows at 3k + 1 and 3k + 2.
int local_row(int contact, int row) { return 3 * contact + row; }

// The island problem of a local problem: W and q split into the normal and friction blocks.
IslandProblem from_local(const LocalProblem& lp) {
  const int nc = lp.contacts();
  if (lp.w.rows() != 3 * nc || lp.w.cols() != 3 * nc || lp.q.size() != 3 * nc)
    throw std::invalid_argument("W must be 3n x 3n and q of size 3n for n contacts");
  IslandProblem ip;
  ip.nc = nc;
  ip.nt = 2;
  ip.mu = lp.mu;
  std::vector<Triplet> nn, nt, tn, tt;
  for (int col = 0; col < lp.w.outerSize(); ++col)
    for (Sparse::InnerIterator it(lp.w, col); it; ++it) {
      const int r = int(it.row()), c = int(it.col());
      const bool rn = r % 3 == 0, cn = c % 3 == 0;
      const int ri = rn ? r / 3 : 2 * (r / 3) + r % 3 - 1, ci = cn ? c / 3 : 2 * (c / 3) + c % 3 - 1;
      (rn ? (cn ? nn : nt) : (cn ? tn : tt)).emplace_back(ri, ci, it.value());
    }
  auto block = [](std::vector<Triplet>& t, int rows, int cols) {
    Sparse m(rows, cols);
    m.setFromTriplets(t.begin(), t.end());
    return m;
  };
  ip.wnn = block(nn, nc, nc);
  ip.wnt = block(nt, nc, 2 * nc);
  ip.wtn = block(tn, 2 * nc, nc);
  ip.wtt = block(tt, 2 * nc, 2 * nc);
  ip.bn.resize(nc);
  ip.bt.resize(2 * nc);
  for (int k = 0; k < nc; ++k) {
    ip.bn[k] = lp.q[local_row(k, 0)];
    for (int j = 0; j < 2; ++j) ip.bt[2 * k + j] = lp.q[local_row(k, 1 + j)];
  }
  ip.wn = VectorXd::Ones(nc);  // a local problem does not say which part of W's diagonal is compliance
  set_scale(ip);
  return ip;
}

}  // namespace

LocalProblem local_problem(const ContactProblem& p, int island) {
  if (p.pyramid || p.friction_dims != 2)
    throw std::invalid_argument("the pyramid friction model has no FCLIB form (use \"friction_model\": \"cone\")");
  const IslandProblem ip = assemble(p, island);
  const int nc = ip.nc;
  LocalProblem lp;
  lp.mu = ip.mu;
  std::vector<Triplet> t;
  auto put = [&](const Sparse& m, bool rows_normal, bool cols_normal) {
    for (int col = 0; col < m.outerSize(); ++col)
      for (Sparse::InnerIterator it(m, col); it; ++it) {
        const int r = int(it.row()), c = int(it.col());
        t.emplace_back(rows_normal ? local_row(r, 0) : local_row(r / 2, 1 + r % 2),
                       cols_normal ? local_row(c, 0) : local_row(c / 2, 1 + c % 2), it.value());
      }
  };
  put(ip.wnn, true, true);
  put(ip.wnt, true, false);
  put(ip.wtn, false, true);
  put(ip.wtt, false, false);
  lp.w.resize(3 * nc, 3 * nc);
  lp.w.setFromTriplets(t.begin(), t.end());
  lp.q.resize(3 * nc);
  for (int k = 0; k < nc; ++k) {
    lp.q[local_row(k, 0)] = ip.bn[k];
    for (int j = 0; j < 2; ++j) lp.q[local_row(k, 1 + j)] = ip.bt[2 * k + j];
  }
  return lp;
}

LocalSolution solve_local(const LocalProblem& lp, const SolverSettings& settings, const SolveControls& controls) {
  const IslandProblem ip = from_local(lp);
  const int nc = ip.nc;
  VectorXd alpha = VectorXd::Zero(nc), beta = VectorXd::Zero(2 * nc);
  const IslandSolution sol = solve_island(ip, alpha, beta, settings, -1, controls);  // no warm start: "auto" by size
  LocalSolution out;
  out.r.resize(3 * nc);
  for (int k = 0; k < nc; ++k) {
    out.r[local_row(k, 0)] = sol.alpha[k];
    for (int j = 0; j < 2; ++j) out.r[local_row(k, 1 + j)] = sol.beta[2 * k + j];
  }
  out.stats = sol.stats;
  out.stats.error = natural_map_error(ip, sol.alpha, sol.beta);
  return out;
}

double local_error(const LocalProblem& lp, const Eigen::VectorXd& r) {
  const IslandProblem ip = from_local(lp);
  if (r.size() != 3 * ip.nc) throw std::invalid_argument("r must have 3 entries per contact");
  VectorXd alpha(ip.nc), beta(2 * ip.nc);
  for (int k = 0; k < ip.nc; ++k) {
    alpha[k] = r[local_row(k, 0)];
    for (int j = 0; j < 2; ++j) beta[2 * k + j] = r[local_row(k, 1 + j)];
  }
  return natural_map_error(ip, alpha, beta);
}

SolveResult solve_reference(const ContactProblem& p, const SolverSettings& settings, const SolveControls& controls) {
  const int nc = p.num_contacts(), nt = p.friction_dims, ni = p.num_islands();
  SolveResult result;
  result.alpha.assign(nc, 0.0);
  result.beta.assign(size_t(nc) * nt, 0.0);
  result.v = p.v_pred;
  result.w = p.w_pred;
  result.islands.resize(ni);
  result.lipschitz_contact.assign(ni, 0.0);
  result.lipschitz_friction.assign(ni, 0.0);

  for (int i = 0; i < ni; ++i) {
    IslandProblem ip = assemble(p, i);
    const int c0 = p.island_contact_begin[i], s0 = p.island_body_begin[i];
    // Warm start, projected onto the friction sets.
    VectorXd alpha = VectorXd::Zero(ip.nc), beta = VectorXd::Zero(ip.nc * nt);
    if (!p.alpha_warm.empty())
      for (int k = 0; k < ip.nc; ++k) alpha[k] = std::max(0.0, p.alpha_warm[c0 + k]);
    if (!p.beta_warm.empty())
      for (int j = 0; j < ip.nc * nt; ++j) beta[j] = p.beta_warm[size_t(c0) * nt + j];
    friction_set(ip, alpha)(beta);

    const IslandSolution sol = solve_island(ip, alpha, beta, settings, p.warm_friction_share(i), controls);
    for (int k = 0; k < ip.nc; ++k) result.alpha[c0 + k] = sol.alpha[k];
    for (int j = 0; j < ip.nc * nt; ++j) result.beta[size_t(c0) * nt + j] = sol.beta[j];
    VectorXd u = ip.up + ip.minv * (Sparse(ip.jn.transpose()) * sol.alpha + Sparse(ip.jt.transpose()) * sol.beta);
    for (int s = s0; s < p.island_body_begin[i + 1]; ++s) {
      int o = 6 * (s - s0);
      result.v[s] = Vec3d{u[o], u[o + 1], u[o + 2]};
      result.w[s] = Vec3d{u[o + 3], u[o + 4], u[o + 5]};
    }
    result.islands[i] = sol.stats;
    result.lipschitz_contact[i] = sol.lipschitz_contact;
    result.lipschitz_friction[i] = sol.lipschitz_friction;
  }
  return result;
}

}  // namespace stagger
