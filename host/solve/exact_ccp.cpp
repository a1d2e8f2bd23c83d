#include "solve/exact_ccp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "kernels/natural_map.h"
#include "kernels/problem_view.h"

namespace stagger {

namespace {

using Mat36 = Eigen::Matrix<double, 3, 6>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;

Vector3d vec(const double* v) { return Vector3d(v[0], v[1], v[2]); }

// The island as matrices: each contact's rows for its bodies (G_a, and G_b with the minus sign of
// w = w_A - w_B), and each body's mass and inverse mass blocks.
struct System {
  int nc = 0, nb = 0;
  std::vector<Mat36> ga, gb;
  std::vector<Mat6> mass, inv_mass;
  VectorXd q, compliance, mu;

  System(const std::vector<ExactContact>& contacts, const std::vector<ExactBody>& bodies)
      : nc(int(contacts.size())), nb(int(bodies.size())), ga(nc), gb(nc), mass(nb), inv_mass(nb), q(3 * nc),
        compliance(nc), mu(nc) {
    for (int k = 0; k < nc; ++k) {
      const ExactContact& c = contacts[k];
      const Vector3d d[3] = {vec(c.n), vec(c.t1), vec(c.t2)};
      for (int i = 0; i < 3; ++i) {
        ga[k].row(i) << d[i].transpose(), vec(c.ra).cross(d[i]).transpose();
        gb[k].row(i) << -d[i].transpose(), -vec(c.rb).cross(d[i]).transpose();
        q[3 * k + i] = c.q[i];
      }
      compliance[k] = c.compliance;
      mu[k] = c.mu;
    }
    for (int b = 0; b < nb; ++b) {
      const Matrix3d inv_inertia = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(bodies[b].inv_inertia);
      inv_mass[b].setZero();
      inv_mass[b].topLeftCorner<3, 3>() = bodies[b].inv_mass * Matrix3d::Identity();
      inv_mass[b].bottomRightCorner<3, 3>() = inv_inertia;
      mass[b].setZero();
      mass[b].topLeftCorner<3, 3>() = (1.0 / bodies[b].inv_mass) * Matrix3d::Identity();
      mass[b].bottomRightCorner<3, 3>() = inv_inertia.inverse();
    }
  }

  // W x (3 rows per contact): G M^-1 G^T x plus the compliance on normal rows; `v` receives M^-1 G^T x.
  VectorXd product(const VectorXd& x, const std::vector<int>& la, const std::vector<int>& lb, VectorXd& v) const {
    VectorXd f = VectorXd::Zero(6 * nb);
    for (int k = 0; k < nc; ++k) {
      const Vector3d xk = x.segment<3>(3 * k);
      if (la[k] >= 0) f.segment<6>(6 * la[k]) += ga[k].transpose() * xk;
      if (lb[k] >= 0) f.segment<6>(6 * lb[k]) += gb[k].transpose() * xk;
    }
    v.resize(6 * nb);
    for (int b = 0; b < nb; ++b) v.segment<6>(6 * b) = inv_mass[b] * f.segment<6>(6 * b);
    VectorXd wx(3 * nc);
    for (int k = 0; k < nc; ++k) {
      Vector3d u = Vector3d::Zero();
      if (la[k] >= 0) u += ga[k] * v.segment<6>(6 * la[k]);
      if (lb[k] >= 0) u += gb[k] * v.segment<6>(6 * lb[k]);
      u[0] += compliance[k] * x[3 * k];
      wx.segment<3>(3 * k) = u;
    }
    return wx;
  }
};

// The cone's barrier, -log(mu^2 a^2 - |t|^2), finite only inside (a > 0).
double cone_slack(double mu, const Vector3d& x) { return mu * mu * x[0] * x[0] - x[1] * x[1] - x[2] * x[2]; }
bool inside(const VectorXd& x, const VectorXd& mu) {
  for (int k = 0; k < mu.size(); ++k)
    if (!(x[3 * k] > 0 && cone_slack(mu[k], x.segment<3>(3 * k)) > 0)) return false;
  return true;
}

// The Coulomb natural-map residual of x, summed in squares, by the solver's own element function
// (kernels/natural_map.h) on a view of the island's friction coefficients, x and u in its layout.
double coulomb_residual2(const VectorXd& x, const VectorXd& u, const VectorXd& mu) {
  const int nc = int(mu.size());
  ProblemView<double> view;
  view.num_contacts = nc;
  view.mu = mu.data();
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
  const int max_newton = std::max(100, int(settings.max_newton * std::min(1.0, size * size * size)));
  std::vector<int> la(nc), lb(nc);
  for (int k = 0; k < nc; ++k) {
    la[k] = contacts[k].a;
    lb[k] = contacts[k].b;
  }
  // Start inside every cone, with normal impulses of the size the free velocities ask for.
  double qn = 0, wn = 0;
  for (int k = 0; k < nc; ++k) {
    qn += std::fabs(sys.q[3 * k]);
    wn += (la[k] >= 0 ? (sys.ga[k] * sys.inv_mass[la[k]] * sys.ga[k].transpose())(0, 0) : 0.0) +
          (lb[k] >= 0 ? (sys.gb[k] * sys.inv_mass[lb[k]] * sys.gb[k].transpose())(0, 0) : 0.0) + sys.compliance[k];
  }
  VectorXd start = VectorXd::Zero(rows);
  const double a0 = wn > 0 && qn > 0 ? qn / wn : 1.0;
  for (int k = 0; k < nc; ++k) start[3 * k] = a0;

  VectorXd best = start, shift = VectorXd::Zero(rows), v;
  // The Newton step's work arrays, made once.
  Eigen::MatrixXd s(6 * nb, 6 * nb);
  Eigen::LDLT<Eigen::MatrixXd> factor(6 * nb);
  std::vector<Matrix3d> d_inv(nc);
  VectorXd grad(rows), y(rows), step(rows), gty(6 * nb), z(6 * nb);
  double best_error = std::numeric_limits<double>::infinity();
  // tau grows 30-fold per stage once a stage's Newton steps have come close to the central path
  // (Newton decrement under 0.5); a step is damped by halving until it stays inside every cone and
  // meets Armijo's test on the barrier objective.
  const double kTauFactor = 30, kCentred = 0.5, kArmijo = 0.25;
  auto error_of = [&](const VectorXd& x, VectorXd& u) {
    u = sys.product(x, la, lb, v) + sys.q;
    return std::sqrt(coulomb_residual2(x, u, sys.mu)) * settings.scale;
  };

  for (int solve = 0; solve < settings.max_solves && result.newton < max_newton; ++solve) {
    const VectorXd c = sys.q + shift;
    // Every relaxation starts afresh: started from the last one's answer, a little back along the
    // central path (tau / 10 or / 100), the arch's steps took fewer Newton steps but converged less
    // often within the budget (7 of its first 14 steps instead of 9).
    VectorXd x = start, u;
    double tau = 2.0 * nc / std::max(std::fabs(c.dot(x)), 1e-300);
    double solve_error = std::numeric_limits<double>::infinity();
    int flat_stages = 0;
    auto barrier_objective = [&](const VectorXd& y) {
      VectorXd vy;
      const VectorXd wy = sys.product(y, la, lb, vy);
      double f = tau * (0.5 * y.dot(wy) + c.dot(y));
      for (int k = 0; k < nc; ++k) f -= std::log(cone_slack(sys.mu[k], y.segment<3>(3 * k)));
      return f;
    };
    while (result.newton < max_newton) {
      // Newton steps toward the barrier problem's minimum at this tau.
      for (;;) {
        if (result.newton >= max_newton) break;
        const VectorXd wx = sys.product(x, la, lb, v);
        grad = tau * (wx + c);
        for (int k = 0; k < nc; ++k) {
          const Vector3d xk = x.segment<3>(3 * k);
          const double mu2 = sys.mu[k] * sys.mu[k], g = cone_slack(sys.mu[k], xk);
          const Vector3d dg(2 * mu2 * xk[0], -2 * xk[1], -2 * xk[2]);
          grad.segment<3>(3 * k) -= dg / g;
          Matrix3d h = dg * dg.transpose() / (g * g);
          h(0, 0) -= 2 * mu2 / g;
          h(1, 1) += 2 / g;
          h(2, 2) += 2 / g;
          h(0, 0) += tau * sys.compliance[k];
          d_inv[k] = h.inverse();
        }
        // S = M / tau + G^T D^-1 G, in body space.
        s.setZero();
        for (int b = 0; b < nb; ++b) s.block<6, 6>(6 * b, 6 * b) = sys.mass[b] / tau;
        for (int k = 0; k < nc; ++k) {
          const int side[2] = {la[k], lb[k]};
          const Mat36* g[2] = {&sys.ga[k], &sys.gb[k]};
          for (int i = 0; i < 2; ++i) {
            if (side[i] < 0) continue;
            const Eigen::Matrix<double, 6, 3> gd = g[i]->transpose() * d_inv[k];
            for (int j = 0; j < 2; ++j)
              if (side[j] >= 0) s.block<6, 6>(6 * side[i], 6 * side[j]) += gd * *g[j];
          }
        }
        factor.compute(s);
        gty.setZero();
        for (int k = 0; k < nc; ++k) {
          y.segment<3>(3 * k) = d_inv[k] * grad.segment<3>(3 * k);
          if (la[k] >= 0) gty.segment<6>(6 * la[k]) += sys.ga[k].transpose() * y.segment<3>(3 * k);
          if (lb[k] >= 0) gty.segment<6>(6 * lb[k]) += sys.gb[k].transpose() * y.segment<3>(3 * k);
        }
        z = factor.solve(gty);
        for (int k = 0; k < nc; ++k) {
          Vector3d gz = Vector3d::Zero();
          if (la[k] >= 0) gz += sys.ga[k] * z.segment<6>(6 * la[k]);
          if (lb[k] >= 0) gz += sys.gb[k] * z.segment<6>(6 * lb[k]);
          step.segment<3>(3 * k) = -(y.segment<3>(3 * k) - d_inv[k] * gz);
        }
        ++result.newton;
        const double decrement = -grad.dot(step);
        if (!std::isfinite(decrement)) break;
        double t = 1;
        while (!inside(x + t * step, sys.mu) && t > 1e-12) t *= 0.5;
        if (t <= 1e-12) break;
        if (decrement < kCentred) {  // near the central path: take the step and tighten
          x += t * step;
          break;
        }
        const double f0 = barrier_objective(x);
        while (barrier_objective(x + t * step) > f0 - kArmijo * t * decrement && t > 1e-12) t *= 0.5;
        x += t * step;
      }
      const double e = error_of(x, u);
      if (e < best_error) {
        best_error = e;
        best = x;
      }
      if (e <= settings.tolerance) break;
      // The relaxed problem's answer no longer improves the Coulomb error: its contacts slide, and
      // the next relaxation (a new shift) is what moves it.
      flat_stages = e > 0.9 * solve_error ? flat_stages + 1 : 0;
      solve_error = std::min(solve_error, e);
      if (flat_stages >= 2) break;
      tau *= kTauFactor;
    }
    ++result.solves;
    if (best_error <= settings.tolerance) break;
    // Successive relaxation: shift the normal rows by mu |v_t| of this solve's answer.
    error_of(x, u);
    for (int k = 0; k < nc; ++k) shift[3 * k] = sys.mu[k] * std::hypot(u[3 * k + 1], u[3 * k + 2]);
  }
  result.solved = std::isfinite(best_error);
  result.error = best_error;
  x_out.assign(best.data(), best.data() + rows);
  return result;
}

}  // namespace stagger
