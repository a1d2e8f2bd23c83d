#include "solve/exact_ccp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "kernels/natural_map.h"
#include "kernels/problem_view.h"
#include "solve/lorentz_cone.h"

namespace stagger {

namespace {

using Mat36 = Eigen::Matrix<double, 3, 6>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;

Vector3d vec(const double* v) { return Vector3d(v[0], v[1], v[2]); }

// The island as matrices: each contact's bodies and rows for them (G_a, and G_b with the minus sign of
// w = w_A - w_B), and each body's mass and inverse mass blocks.
struct System {
  int nc = 0, nb = 0;
  std::vector<int> a, b;
  std::vector<Mat36> ga, gb;
  std::vector<Mat6> mass, inv_mass;
  VectorXd q, compliance, mu, residual_weight;

  System(const std::vector<ExactContact>& contacts, const std::vector<ExactBody>& bodies)
      : nc(int(contacts.size())), nb(int(bodies.size())), a(nc), b(nc), ga(nc), gb(nc), mass(nb), inv_mass(nb),
        q(3 * nc), compliance(nc), mu(nc), residual_weight(nc) {
    for (int k = 0; k < nc; ++k) {
      const ExactContact& c = contacts[k];
      a[k] = c.a;
      b[k] = c.b;
      const Vector3d d[3] = {vec(c.n), vec(c.t1), vec(c.t2)};
      for (int i = 0; i < 3; ++i) {
        ga[k].row(i) << d[i].transpose(), vec(c.ra).cross(d[i]).transpose();
        gb[k].row(i) << -d[i].transpose(), -vec(c.rb).cross(d[i]).transpose();
        q[3 * k + i] = c.q[i];
      }
      compliance[k] = c.compliance;
      mu[k] = c.mu;
      residual_weight[k] = c.residual_weight;
    }
    for (int i = 0; i < nb; ++i) {
      const Matrix3d inv_inertia = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(bodies[i].inv_inertia);
      inv_mass[i].setZero();
      inv_mass[i].topLeftCorner<3, 3>() = bodies[i].inv_mass * Matrix3d::Identity();
      inv_mass[i].bottomRightCorner<3, 3>() = inv_inertia;
      mass[i].setZero();
      mass[i].topLeftCorner<3, 3>() = (1.0 / bodies[i].inv_mass) * Matrix3d::Identity();
      mass[i].bottomRightCorner<3, 3>() = inv_inertia.inverse();
    }
  }

  // W x (3 rows per contact): G M^-1 G^T x plus the compliance on normal rows.
  VectorXd product(const VectorXd& x) const {
    VectorXd f = VectorXd::Zero(6 * nb);
    for (int k = 0; k < nc; ++k) {
      const Vector3d xk = x.segment<3>(3 * k);
      if (a[k] >= 0) f.segment<6>(6 * a[k]) += ga[k].transpose() * xk;
      if (b[k] >= 0) f.segment<6>(6 * b[k]) += gb[k].transpose() * xk;
    }
    for (int i = 0; i < nb; ++i) f.segment<6>(6 * i) = inv_mass[i] * f.segment<6>(6 * i).eval();
    VectorXd wx(3 * nc);
    for (int k = 0; k < nc; ++k) {
      Vector3d u = Vector3d::Zero();
      if (a[k] >= 0) u += ga[k] * f.segment<6>(6 * a[k]);
      if (b[k] >= 0) u += gb[k] * f.segment<6>(6 * b[k]);
      u[0] += compliance[k] * x[3 * k];
      wx.segment<3>(3 * k) = u;
    }
    return wx;
  }
};

// The interior-point method works in the Lorentz cone's coordinates: a contact's s = (mu a, t), so
// that x = S s with S = diag(1 / mu, 1, 1), and its dual z = S (W x + q + sigma) = (v_n / mu, v_t), the
// relaxed problem's rows (c~ = S (q + sigma) below). This converts s to x.
VectorXd x_of_s(const VectorXd& s, const VectorXd& mu) {
  VectorXd x = s;
  for (int k = 0; k < mu.size(); ++k) x[3 * k] /= mu[k];
  return x;
}

// The Newton system of an interior-point iteration at (s, z), in x's rows: (W + D) dx = rhs, D the
// contacts' 3x3 blocks S^-1 W_nt^-2 S^-1 (W_nt their Nesterov-Todd scalings). Solved by Woodbury in
// body space, dx = E rhs - E G (M + G^T E G)^-1 G^T E rhs with E = (D + compliance)^-1: one LDL^T
// factorization of 6 rows per body instead of 3 rows per contact.
class NewtonSystem {
 public:
  explicit NewtonSystem(const System& sys)
      : sys_(sys), body_(6 * sys.nb, 6 * sys.nb), factor_(6 * sys.nb), d_(sys.nc), e_(sys.nc) {}

  std::vector<NtScaling> scaling;

  void factorize(const VectorXd& s, const VectorXd& z) {
    scaling.clear();
    for (int k = 0; k < sys_.nc; ++k) {
      scaling.emplace_back(s.segment<3>(3 * k), z.segment<3>(3 * k));
      // D from W_nt^-2 and E from W_nt^2 (not by inverting D: near the answer its eigenvalues span the
      // square of the gap's decades), the compliance by Sherman-Morrison.
      const Vector3d s_inverse(sys_.mu[k], 1, 1), s_diagonal(1 / sys_.mu[k], 1, 1);  // S^-1 and S
      d_[k] = s_inverse.asDiagonal() * scaling[k].matrix(-2) * s_inverse.asDiagonal();
      const Matrix3d e = s_diagonal.asDiagonal() * scaling[k].matrix(2) * s_diagonal.asDiagonal();
      const double c = sys_.compliance[k];
      e_[k] = c > 0 ? Matrix3d(e - c * e.col(0) * e.row(0) / (1 + c * e(0, 0))) : e;
    }
    body_.setZero();
    for (int i = 0; i < sys_.nb; ++i) body_.block<6, 6>(6 * i, 6 * i) = sys_.mass[i];
    for (int k = 0; k < sys_.nc; ++k) {
      const int side[2] = {sys_.a[k], sys_.b[k]};
      const Mat36* g[2] = {&sys_.ga[k], &sys_.gb[k]};
      for (int i = 0; i < 2; ++i) {
        if (side[i] < 0) continue;
        const Eigen::Matrix<double, 6, 3> ge = g[i]->transpose() * e_[k];
        for (int j = 0; j < 2; ++j)
          if (side[j] >= 0) body_.block<6, 6>(6 * side[i], 6 * side[j]) += ge * *g[j];
      }
    }
    factor_.compute(body_);
  }

  // Near the answer E spans many decades (huge on loaded contacts, tiny on open ones) and Woodbury's
  // two terms cancel: a step of iterative refinement on the contacts' rows restores the digits. One,
  // not two: measured in pairs on the same problems (docs/method.md, "The exact solve of small
  // islands"), the arch met its tolerance as often with one, and piles of boxes and bunnies met it as
  // often or more in 20-30% less time (fewer relaxations, besides the pass saved).
  static constexpr int kRefinements = 1;
  void solve(const VectorXd& rhs, VectorXd& dx) {
    solve_once(rhs, dx);
    for (int pass = 0; pass < kRefinements; ++pass) {
      residual_ = rhs - sys_.product(dx);
      for (int k = 0; k < sys_.nc; ++k) residual_.segment<3>(3 * k) -= d_[k] * dx.segment<3>(3 * k);
      solve_once(residual_, correction_);
      dx += correction_;
    }
  }

 private:
  void solve_once(const VectorXd& rhs, VectorXd& dx) {
    const int nc = sys_.nc;
    y_.resize(3 * nc);
    gty_ = VectorXd::Zero(6 * sys_.nb);
    for (int k = 0; k < nc; ++k) {
      y_.segment<3>(3 * k) = e_[k] * rhs.segment<3>(3 * k);
      if (sys_.a[k] >= 0) gty_.segment<6>(6 * sys_.a[k]) += sys_.ga[k].transpose() * y_.segment<3>(3 * k);
      if (sys_.b[k] >= 0) gty_.segment<6>(6 * sys_.b[k]) += sys_.gb[k].transpose() * y_.segment<3>(3 * k);
    }
    const VectorXd v = factor_.solve(gty_);
    dx.resize(3 * nc);
    for (int k = 0; k < nc; ++k) {
      Vector3d gv = Vector3d::Zero();
      if (sys_.a[k] >= 0) gv += sys_.ga[k] * v.segment<6>(6 * sys_.a[k]);
      if (sys_.b[k] >= 0) gv += sys_.gb[k] * v.segment<6>(6 * sys_.b[k]);
      dx.segment<3>(3 * k) = y_.segment<3>(3 * k) - e_[k] * gv;
    }
  }

  const System& sys_;
  Eigen::MatrixXd body_;
  Eigen::LDLT<Eigen::MatrixXd> factor_;
  std::vector<Matrix3d> d_, e_;
  VectorXd y_, gty_, residual_, correction_;
};

// The Coulomb natural-map residual of x, summed in squares, by the solver's own element function
// (kernels/natural_map.h) on a view of the island's friction coefficients and residual weights, x and
// u in its layout.
double coulomb_residual2(const VectorXd& x, const VectorXd& u, const VectorXd& mu, const VectorXd& weight) {
  const int nc = int(mu.size());
  ProblemView<double> view;
  view.num_contacts = nc;
  view.mu = mu.data();
  view.residual_weight = weight.data();
  const ConeView<double> cone(view);
  std::vector<double> alpha(nc), beta(2 * size_t(nc));
  for (int k = 0; k < nc; ++k) {
    alpha[k] = x[3 * k];
    beta[2 * k] = x[3 * k + 1];
    beta[2 * k + 1] = x[3 * k + 2];
  }
  double sum = 0;
  for (int k = 0; k < nc; ++k) {
    const double vt[2] = {u[3 * k + 1], u[3 * k + 2]};
    sum += natural_map_residual2_of_rows(cone, k, alpha.data(), beta.data(), u[3 * k], vt, /*coulomb=*/true);
  }
  return sum;
}

// Tuning, measured on the catenary arch (its 200 steps, and four runs whose gravity is tilted by
// 1e-7..4e-7 m/s^2 so that their paths part after a few steps: 176 steps before the impact in all).
// A relaxed problem after the first starts from the last one's answer moved by kWarmStart of the cold
// start toward the cones' axes (about half the iterations; 1e-3 and 1e-4 converged fewer steps).
constexpr double kWarmStart = 1e-2;
// The shifts' fixed point is mixed by Anderson's method of depth one on the loaded contacts (an open
// contact's shift changes nothing, and left in the mixing it steers it) for kMixedRelaxations
// relaxations, then damped by kDamping: mixed, some islands' relaxations drift; damped from the
// start, they take longer.
constexpr int kMixedRelaxations = 15;
constexpr double kDamping = 0.5;
// A contact is loaded above this fraction of the island's largest normal impulse.
constexpr double kLoaded = 1e-6;

}  // namespace

bool exact_ccp_applies(const std::vector<ExactContact>& contacts, int bodies) {
  if (contacts.empty() || bodies <= 0 || 6 * bodies > kExactMaxRows) return false;
  for (const ExactContact& c : contacts)
    if (!(c.mu > 0)) return false;
  return true;
}

ExactCcpResult solve_exact_ccp(const std::vector<ExactContact>& contacts, const std::vector<ExactBody>& bodies,
                               const ExactCcpSettings& settings, std::vector<double>& x_out) {
  ExactCcpResult result;
  if (!exact_ccp_applies(contacts, int(bodies.size()))) return result;
  const System sys(contacts, bodies);
  const int nc = sys.nc, nb = sys.nb, rows = 3 * nc;
  // The budget is settings.max_newton up to kBudgetRows rows of the Newton system, and the same work
  // beyond (a factorization costs the cube of its rows).
  const double size = double(kBudgetRows) / (6 * nb);
  const int max_newton =
      std::max(std::min(100, settings.max_newton), int(settings.max_newton * std::min(1.0, size * size * size)));
  // The cold start, on the cones' axes: normal impulses of the size the free velocities ask for, and
  // dual rows of the free velocities' size.
  double qn = 0, wn = 0, qnorm = 0;
  for (int k = 0; k < nc; ++k) {
    qn += std::fabs(sys.q[3 * k]);
    qnorm += sys.q.segment<3>(3 * k).norm();
    wn += (sys.a[k] >= 0 ? (sys.ga[k] * sys.inv_mass[sys.a[k]] * sys.ga[k].transpose())(0, 0) : 0.0) +
          (sys.b[k] >= 0 ? (sys.gb[k] * sys.inv_mass[sys.b[k]] * sys.gb[k].transpose())(0, 0) : 0.0) +
          sys.compliance[k];
  }
  const double a0 = wn > 0 && qn > 0 ? qn / wn : 1.0, z0 = qnorm > 0 ? qnorm / nc : 1.0;
  VectorXd cold_s = VectorXd::Zero(rows), cold_z = VectorXd::Zero(rows);
  for (int k = 0; k < nc; ++k) {
    cold_s[3 * k] = sys.mu[k] * a0;
    cold_z[3 * k] = z0;
  }

  NewtonSystem newton(sys);
  VectorXd best = x_of_s(cold_s, sys.mu), shift = VectorXd::Zero(nc), u;
  VectorXd start(rows), start_u;  // the outer loop's answer, and its velocity rows
  for (int k = 0; k < nc; ++k)
    for (int r = 0; r < 3; ++r) start[3 * k + r] = contacts[k].start[r];
  double best_error = std::numeric_limits<double>::infinity(), cold_residual = -1;
  auto error_of = [&](const VectorXd& x, VectorXd& velocity_rows) {
    velocity_rows = sys.product(x) + sys.q;
    return std::sqrt(coulomb_residual2(x, velocity_rows, sys.mu, sys.residual_weight)) * settings.scale;
  };
  VectorXd last_s, last_z, last_shift, last_g;  // the last relaxed answer, and the mixing's memory

  for (int relaxed = 0; relaxed < settings.max_solves && result.newton < max_newton; ++relaxed) {
    // c~ = S (q + shift), the shift on normal rows.
    VectorXd c = sys.q;
    for (int k = 0; k < nc; ++k) c[3 * k] = (c[3 * k] + shift[k]) / sys.mu[k];
    VectorXd s = cold_s, z = cold_z;
    if (relaxed > 0) {
      s = last_s + kWarmStart * cold_s;
      z = last_z + kWarmStart * cold_z;
    }
    VectorXd answer_s = s, answer_z = z, answer_x = x_of_s(s, sys.mu), answer_u;
    double answer_error = std::numeric_limits<double>::infinity(), least_residual = cold_residual;
    int flat = 0;
    // Mehrotra's predictor-corrector on the monotone complementarity problem z = W~ s + c~, s and z in
    // L, s o z = 0, from an infeasible start; each iterate's Coulomb error is measured, and the best
    // kept.
    while (result.newton < max_newton) {
      const VectorXd x = x_of_s(s, sys.mu);
      const double e = error_of(x, u);
      if (e < best_error) {
        best_error = e;
        best = x;
      }
      if (e <= settings.tolerance) break;
      // r = W~ s + c~ - z, with W~ s = S W x from u = W x + q.
      VectorXd r = u - sys.q;
      for (int k = 0; k < nc; ++k) r[3 * k] /= sys.mu[k];
      r += c - z;
      // Far below the start's gap the Newton systems lose their digits and the residual, driven to
      // rounding, grows again: the iterates are no better from there.
      const double r_norm = r.norm();
      // (A start already feasible to rounding measures from the problem's own size instead.)
      if (cold_residual < 0) cold_residual = least_residual = std::max(r_norm, 1e-12 * (c.norm() + z.norm()));
      if (r_norm > std::max(100 * least_residual, 1e-9 * cold_residual)) break;
      least_residual = std::min(least_residual, r_norm);
      // Converged (feasible, and the Coulomb error no longer falls): the relaxed answer's contacts
      // slide, and the next relaxation (a new shift) is what moves it.
      flat = e > 0.9 * answer_error && r_norm < 1e-6 * cold_residual ? flat + 1 : 0;
      if (e < answer_error) {
        answer_error = e;
        answer_x = x;
        answer_u = u;
        answer_s = s;
        answer_z = z;
      }
      if (flat >= 3) break;

      newton.factorize(s, z);
      ++result.newton;
      const std::vector<NtScaling>& nt = newton.scaling;
      // The direction for a complementarity target d (lambda o (W_nt dz + W_nt^-1 ds) = d): with
      // w = lambda \ d, (W~ + W_nt^-2) ds = -r + W_nt^-1 w. dz then comes from the residual's equation,
      // dz = W~ ds + r, rather than from the complementarity's: a direction the linear algebra got
      // slightly wrong then costs centrality, which the next iteration restores, not feasibility,
      // which would accumulate.
      VectorXd ds(rows), dz(rows), rhs(rows), dx;
      auto direction = [&](const std::vector<Vector3d>& target) {
        for (int k = 0; k < nc; ++k) {
          const Vector3d rk = -r.segment<3>(3 * k) + nt[k].apply(-1, jordan_solve(nt[k].lambda, target[k]));
          rhs.segment<3>(3 * k) = Vector3d(sys.mu[k] * rk[0], rk[1], rk[2]);  // S^-1 (...), x's rows
        }
        newton.solve(rhs, dx);
        const VectorXd wdx = sys.product(dx);
        for (int k = 0; k < nc; ++k) {
          ds.segment<3>(3 * k) = Vector3d(sys.mu[k] * dx[3 * k], dx[3 * k + 1], dx[3 * k + 2]);
          dz.segment<3>(3 * k) = Vector3d(wdx[3 * k] / sys.mu[k], wdx[3 * k + 1], wdx[3 * k + 2]) + r.segment<3>(3 * k);
        }
      };
      auto longest_step = [&](double cap) {
        double t = cap;
        for (int k = 0; k < nc; ++k) {
          t = step_to_boundary(s.segment<3>(3 * k), ds.segment<3>(3 * k), t);
          t = step_to_boundary(z.segment<3>(3 * k), dz.segment<3>(3 * k), t);
        }
        return t;
      };
      const double gap = s.dot(z) / nc;
      // Predictor (affine scaling): d = -lambda o lambda.
      std::vector<Vector3d> target(nc);
      for (int k = 0; k < nc; ++k) target[k] = -jordan_product(nt[k].lambda, nt[k].lambda);
      direction(target);
      const double t_affine = longest_step(1.0);
      const double gap_affine = (s + t_affine * ds).dot(z + t_affine * dz) / nc;
      const double sigma = std::pow(std::clamp(gap_affine / gap, 0.0, 1.0), 3);
      // Corrector: d = -lambda o lambda - (W_nt^-1 ds_a) o (W_nt dz_a) + sigma gap e.
      for (int k = 0; k < nc; ++k) {
        target[k] -= jordan_product(nt[k].apply(-1, ds.segment<3>(3 * k)), nt[k].apply(1, dz.segment<3>(3 * k)));
        target[k][0] += sigma * gap;
      }
      direction(target);
      const double t = std::min(1.0, 0.99 * longest_step(1.0 / 0.99));
      if (!(t > 0) || !ds.allFinite() || !dz.allFinite()) break;
      s += t * ds;
      z += t * dz;
    }
    ++result.solves;
    if (best_error <= settings.tolerance) break;
    last_s = answer_s;
    last_z = answer_z;
    // Successive relaxation: the next shift is mu |v_t| of this answer, g, mixed with the last ones.
    if (answer_u.size() == 0) error_of(answer_x, answer_u);  // no iterate was measured better
    // The first relaxed problem has no shift, which is the answer where every contact sticks (a
    // standing structure). Where contacts slide it separates them spuriously, and the outer loop's
    // answer, if its Coulomb error is smaller, gives the better first shift: a pile of boxes landing
    // then takes about a third fewer relaxations (docs/method.md, "The exact solve of small islands").
    // (Measured only here: a structure's first relaxed answer usually meets the tolerance.)
    if (relaxed == 0 && start.squaredNorm() > 0 && error_of(start, start_u) < answer_error) {
      answer_x = start;
      answer_u = start_u;
    }
    VectorXd g(nc), loaded = VectorXd::Zero(nc);
    double largest = 0;
    for (int k = 0; k < nc; ++k) {
      g[k] = sys.mu[k] * std::hypot(answer_u[3 * k + 1], answer_u[3 * k + 2]);
      largest = std::max(largest, answer_x[3 * k]);
    }
    for (int k = 0; k < nc; ++k) loaded[k] = answer_x[3 * k] > kLoaded * largest ? 1.0 : 0.0;
    VectorXd next = g;
    if (relaxed >= kMixedRelaxations) {
      next = shift + kDamping * (g - shift);
    } else if (relaxed > 0) {
      // Anderson(1): next = g - gamma (g - g_last), gamma minimizing |f - gamma (f - f_last)| over the
      // loaded contacts' rows, f = g - shift.
      const VectorXd f = loaded.cwiseProduct(g - shift), df = f - loaded.cwiseProduct(last_g - last_shift);
      const double dd = df.squaredNorm();
      if (dd > 0) next = g - (df.dot(f) / dd) * loaded.cwiseProduct(g - last_g);
    }
    last_shift = shift;
    last_g = g;
    shift = next.cwiseMax(0.0);
  }
  result.solved = std::isfinite(best_error);
  result.error = best_error;
  x_out.assign(best.data(), best.data() + rows);
  return result;
}

}  // namespace stagger
