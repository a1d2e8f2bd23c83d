#include "staggered.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "kernels/delassus.h"
#include "kernels/natural_map.h"
#include "parallel.h"

namespace stagger {

namespace {

// b_floor of SOLVER.md, per row (m/s): errors are relative to |b|, except when the free velocity
// is essentially zero (bodies at rest with no load), where they become absolute at this scale.
constexpr double kFreeVelocityFloor = 1e-6;

template <class F>
void for_island_contacts(const ProblemView<double>& p, int island, F&& f) {
  for (int k = p.island_contact_begin[island]; k < p.island_contact_begin[island + 1]; ++k) f(k);
}

}  // namespace

void BatchedSolver::resize(const ContactProblem& problem) {
  const int nc = problem.num_contacts(), nb = problem.num_bodies(), ni = problem.num_islands();
  nt_ = problem.friction_dims;
  for (Unknowns* u : {&cur_, &best_, &x_, &y_, &xp_, &gx_, &gy_, &gxp_, &xbest_}) {
    u->alpha.assign(nc, 0.0);
    u->beta.assign(size_t(nc) * nt_, 0.0);
  }
  v_.assign(nb, Vec3d{0, 0, 0});
  w_.assign(nb, Vec3d{0, 0, 0});
  shift_.assign(nc, 0.0);
  terms_.assign(nc, ApgdTerms<double>{0, 0, 0, 0});
  contact_value_.assign(nc, 0.0);
  apgd_.assign(ni, ApgdIsland<double>{});
  for (auto* v : {&scale_, &error_, &best_error_, &tau_, &lipschitz_contact_, &lipschitz_friction_}) v->assign(ni, 0.0);
  all_.assign(ni, 1);
  active_.assign(ni, 0);
  improved_.assign(ni, 0);
  stats_.assign(ni, IslandStats{});
}

void BatchedSolver::velocities(const Unknowns& gamma, const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  parallel_for(p.num_bodies, [&](int s) {
    if (!mask[p.body_island[s]]) return;
    body_velocity(p, s, gamma.alpha.data(), gamma.beta.data(), v_[s], w_[s]);
  });
}

void BatchedSolver::gradient(Unknowns& g, const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  parallel_for(p.num_contacts, [&](int k) {
    if (!mask[p.contact_island[k]]) return;
    Vec3d vel = contact_velocity(p, k, v_.data(), w_.data());
    contact_rows(p, k, vel, shift_[k], g.alpha.data(), g.beta.data());
  });
}

void BatchedSolver::copy_island_unknowns(const Unknowns& from, Unknowns& to, const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  const int nt = nt_;
  parallel_for(p.num_contacts, [&](int k) {
    if (!mask[p.contact_island[k]]) return;
    to.alpha[k] = from.alpha[k];
    std::copy_n(from.beta.begin() + size_t(k) * nt, nt, to.beta.begin() + size_t(k) * nt);
  });
}

void BatchedSolver::island_errors(const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  velocities(cur_, mask);
  parallel_for(p.num_contacts, [&](int k) {
    if (!mask[p.contact_island[k]]) return;
    Vec3d vel = contact_velocity(p, k, v_.data(), w_.data());
    contact_value_[k] = natural_map_residual2(p, k, cur_.alpha.data(), cur_.beta.data(), vel, /*coulomb=*/true);
  });
  parallel_for(p.num_islands, [&](int i) {
    if (!mask[i]) return;
    double sum = 0;
    for_island_contacts(p, i, [&](int k) { sum += contact_value_[k]; });
    error_[i] = std::sqrt(sum) * scale_[i];
  });
}

void BatchedSolver::run_qp(QpPhase phase, const std::vector<int>& run, int max_iterations) {
  const ProblemView<double>& p = p_;
  const int nt = nt_;
  const bool alpha_moves = moves_alpha(phase), beta_moves = moves_beta(phase);

  // Start point: the current unknowns projected onto this phase's set; x = y = x+ = best.
  parallel_for(p.num_contacts, [&](int k) {
    if (!run[p.contact_island[k]]) return;
    double a, b[kMaxFacets];
    load_unknowns(p, k, cur_.alpha.data(), cur_.beta.data(), a, b);
    project_phase(p, k, phase, a, b);
    for (Unknowns* u : {&x_, &y_, &xp_, &xbest_}) store_unknowns(p, k, a, b, u->alpha.data(), u->beta.data());
  });
  velocities(x_, run);
  gradient(gx_, run);
  parallel_for(p.num_contacts, [&](int k) {
    if (!run[p.contact_island[k]]) return;
    gy_.alpha[k] = gx_.alpha[k];
    std::copy_n(gx_.beta.begin() + size_t(k) * nt, nt, gy_.beta.begin() + size_t(k) * nt);
    contact_value_[k] =
        projected_gradient_residual(p, k, phase, x_.alpha.data(), x_.beta.data(), gx_.alpha.data(), gx_.beta.data());
  });
  std::vector<double>& lipschitz = phase == QpPhase::friction ? lipschitz_friction_ : lipschitz_contact_;
  parallel_for(p.num_islands, [&](int i) {
    ApgdIsland<double>& s = apgd_[i];
    s = ApgdIsland<double>{};
    if (!run[i]) return;
    double r2 = 0, diagonal = 0;
    for_island_contacts(p, i, [&](int k) {
      r2 += contact_value_[k];
      diagonal = std::max(diagonal, delassus_diagonal_max(p, k, phase));
    });
    // L is at least the largest diagonal entry of the island's Delassus block; the previous
    // estimate (from this step's earlier passes or the previous step) is usually closer.
    s.lipschitz = std::max({lipschitz[i], diagonal, std::numeric_limits<double>::min()});
    s.tolerance = tau_[i];
    s.scale = scale_[i];
    s.best_residual = std::sqrt(r2) * s.scale;
    s.active = s.best_residual > s.tolerance ? 1 : 0;
  });

  for (;;) {
    bool any = false;
    for (int i = 0; i < p.num_islands; ++i) {
      active_[i] = apgd_[i].active;
      any = any || active_[i];
    }
    if (!any) break;
    // apgd_trial_point: x+ = P(y - g(y) / L)
    parallel_for(p.num_contacts, [&](int k) {
      int i = p.contact_island[k];
      if (!active_[i]) return;
      apgd_trial_point(p, k, phase, apgd_[i].lipschitz, y_.alpha.data(), y_.beta.data(), gy_.alpha.data(),
                       gy_.beta.data(), xp_.alpha.data(), xp_.beta.data());
    });
    velocities(xp_, active_);
    gradient(gxp_, active_);
    parallel_for(p.num_contacts, [&](int k) {
      if (!active_[p.contact_island[k]]) return;
      terms_[k] = apgd_terms(p, k, phase, x_.alpha.data(), x_.beta.data(), y_.alpha.data(), y_.beta.data(),
                             xp_.alpha.data(), xp_.beta.data(), gy_.alpha.data(), gy_.beta.data(), gxp_.alpha.data(),
                             gxp_.beta.data());
    });
    parallel_for(p.num_islands, [&](int i) {
      if (!active_[i]) return;
      ApgdTerms<double> sum{0, 0, 0, 0};
      for_island_contacts(p, i, [&](int k) {
        sum.d_Ad += terms_[k].d_Ad;
        sum.d_d += terms_[k].d_d;
        sum.g_dx += terms_[k].g_dx;
        sum.residual += terms_[k].residual;
      });
      apgd_control(apgd_[i], sum, max_iterations);
    });
    parallel_for(p.num_contacts, [&](int k) {
      const ApgdIsland<double>& s = apgd_[p.contact_island[k]];
      if (!s.accepted) return;
      if (alpha_moves)
        apgd_accept(1, s.momentum, &x_.alpha[k], &y_.alpha[k], &xp_.alpha[k], &gx_.alpha[k], &gy_.alpha[k],
                    &gxp_.alpha[k]);
      if (beta_moves) {
        size_t o = size_t(k) * nt;
        apgd_accept(nt, s.momentum, &x_.beta[o], &y_.beta[o], &xp_.beta[o], &gx_.beta[o], &gy_.beta[o], &gxp_.beta[o]);
      }
      if (s.improved) {
        double a, b[kMaxFacets];
        load_unknowns(p, k, x_.alpha.data(), x_.beta.data(), a, b);
        store_unknowns(p, k, a, b, xbest_.alpha.data(), xbest_.beta.data());
      }
    });
  }
  for (int i = 0; i < p.num_islands; ++i) {
    if (!run[i]) continue;
    lipschitz[i] = apgd_[i].lipschitz;
    stats_[i].inner_iterations += apgd_[i].iterations;
  }
  copy_island_unknowns(xbest_, cur_, run);
}

void BatchedSolver::trace(const SolveControls& c, int iteration, const std::vector<int>& outer) const {
  if (c.trace_min_contacts <= 0) return;
  for (int i = 0; i < p_.num_islands; ++i) {
    int contacts = p_.island_contact_begin[i + 1] - p_.island_contact_begin[i];
    if (contacts < c.trace_min_contacts) continue;
    std::fprintf(stderr, "  island %d (%d contacts) outer %d: error %.3e  tau %.2e  inner total %d  L %.3g/%.3g%s\n", i,
                 contacts, iteration, error_[i], tau_[i], stats_[i].inner_iterations, lipschitz_contact_[i],
                 lipschitz_friction_[i], outer[i] ? "" : "  (done)");
  }
}

void BatchedSolver::solve_staggered(const SolverSettings& s, const SolveControls& c) {
  const int ni = p_.num_islands;
  island_errors(all_);  // error of the warm start: sets the first inner tolerance
  std::vector<int> outer = all_;
  trace(c, 0, outer);
  std::fill(best_error_.begin(), best_error_.end(), std::numeric_limits<double>::infinity());
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    for (int i = 0; i < ni; ++i)
      if (outer[i]) tau_[i] = c.adaptive_inner_tolerance ? std::max(s.inner_tolerance, 0.1 * error_[i]) : s.inner_tolerance;
    run_qp(QpPhase::contact, outer, s.max_inner_iterations);
    island_errors(outer);
    bool any = false;
    for (int i = 0; i < ni; ++i) {
      improved_[i] = 0;
      if (!outer[i]) continue;
      stats_[i].outer_iterations = it;
      if (error_[i] < best_error_[i] || !std::isfinite(best_error_[i])) {  // errors are not monotone
        best_error_[i] = error_[i];
        improved_[i] = 1;
      }
      if (error_[i] <= s.tolerance) {
        stats_[i].converged = true;
        outer[i] = 0;
      }
      any = any || outer[i];
    }
    copy_island_unknowns(cur_, best_, improved_);
    trace(c, it, outer);
    if (!any) break;
    run_qp(QpPhase::friction, outer, s.max_inner_iterations);
  }
  copy_island_unknowns(best_, cur_, all_);
  for (int i = 0; i < ni; ++i) stats_[i].error = best_error_[i];
}

void BatchedSolver::solve_ccp(const SolverSettings& s) {
  const int ni = p_.num_islands;
  std::fill(tau_.begin(), tau_.end(), s.tolerance);
  long long budget = std::min<long long>(1LL * s.max_inner_iterations * s.max_outer_iterations, 1 << 30);
  run_qp(QpPhase::both, all_, int(budget));
  for (int i = 0; i < ni; ++i) {
    stats_[i].outer_iterations = 1;
    stats_[i].converged = apgd_[i].best_residual <= s.tolerance;  // the relaxed problem's own error
  }
  island_errors(all_);
  for (int i = 0; i < ni; ++i) stats_[i].error = error_[i];
}

void BatchedSolver::solve_successive_relaxation(const SolverSettings& s) {
  const ProblemView<double>& p = p_;
  const int ni = p.num_islands;
  std::vector<int> outer = all_;
  std::fill(best_error_.begin(), best_error_.end(), std::numeric_limits<double>::infinity());
  // Shift the normal rows by Gamma_k = mu |v_t| of the previous iterate (Anitescu-Hart 2004), so
  // that the relaxed solution's spurious separation mu |v_t| is cancelled at the fixed point.
  auto update_shift = [&](const std::vector<int>& mask) {
    parallel_for(p.num_contacts, [&](int k) {
      if (!mask[p.contact_island[k]]) return;
      double vt[kMaxFacets];
      friction_rows(p, contact_velocity(p, k, v_.data(), w_.data()), vt);
      shift_[k] = coulomb_shift(p, k, vt);
    });
  };
  island_errors(all_);  // also leaves the warm start's velocities in v_, w_
  update_shift(all_);
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    for (int i = 0; i < ni; ++i)
      if (outer[i]) tau_[i] = std::max(s.inner_tolerance, 0.1 * error_[i]);
    run_qp(QpPhase::both, outer, s.max_inner_iterations);
    island_errors(outer);
    bool any = false;
    for (int i = 0; i < ni; ++i) {
      improved_[i] = 0;
      if (!outer[i]) continue;
      stats_[i].outer_iterations = it;
      if (error_[i] < best_error_[i] || !std::isfinite(best_error_[i])) {
        best_error_[i] = error_[i];
        improved_[i] = 1;
      }
      if (error_[i] <= s.tolerance) {
        stats_[i].converged = true;
        outer[i] = 0;
      }
      any = any || outer[i];
    }
    copy_island_unknowns(cur_, best_, improved_);
    if (!any) break;
    update_shift(outer);
  }
  copy_island_unknowns(best_, cur_, all_);
  for (int i = 0; i < ni; ++i) stats_[i].error = best_error_[i];
}

SolveResult BatchedSolver::solve(const ContactProblem& problem, const SolverSettings& settings,
                                 const SolveControls& controls) {
  problem_ = &problem;
  p_ = problem.view();
  resize(problem);
  const ProblemView<double>& p = p_;
  const int nt = nt_;

  // Island scales 1 / max(|b|, b_floor) from the free (predictor) velocities.
  parallel_for(p.num_contacts, [&](int k) {
    contact_value_[k] = free_velocity_norm2(p, k, contact_velocity(p, k, p.v_pred, p.w_pred));
  });
  parallel_for(p.num_islands, [&](int i) {
    double sum = 0;
    for_island_contacts(p, i, [&](int k) { sum += contact_value_[k]; });
    int rows = (p.island_contact_begin[i + 1] - p.island_contact_begin[i]) * (1 + nt);
    scale_[i] = 1.0 / std::max(std::sqrt(sum), kFreeVelocityFloor * std::sqrt(double(rows)));
  });

  // Warm start, projected: alpha >= 0, beta in its friction set for that alpha.
  if (!problem.alpha_warm.empty()) cur_.alpha = problem.alpha_warm;
  if (!problem.beta_warm.empty()) cur_.beta = problem.beta_warm;
  parallel_for(p.num_contacts, [&](int k) {
    double a, b[kMaxFacets];
    load_unknowns(p, k, cur_.alpha.data(), cur_.beta.data(), a, b);
    project_phase(p, k, QpPhase::contact, a, b);
    project_phase(p, k, QpPhase::friction, a, b);
    store_unknowns(p, k, a, b, cur_.alpha.data(), cur_.beta.data());
  });
  for (int i = 0; i < p.num_islands; ++i) {
    lipschitz_contact_[i] = i < int(problem.lipschitz_hint_contact.size()) ? problem.lipschitz_hint_contact[i] : 0.0;
    lipschitz_friction_[i] = i < int(problem.lipschitz_hint_friction.size()) ? problem.lipschitz_hint_friction[i] : 0.0;
  }

  switch (settings.method) {
    case Method::staggered: solve_staggered(settings, controls); break;
    case Method::ccp: solve_ccp(settings); break;
    case Method::successive_relaxation: solve_successive_relaxation(settings); break;
  }

  velocities(cur_, all_);
  SolveResult result;
  result.alpha = cur_.alpha;
  result.beta = cur_.beta;
  result.v = v_;
  result.w = w_;
  result.islands = stats_;
  result.lipschitz_contact = lipschitz_contact_;
  result.lipschitz_friction = lipschitz_friction_;
  return result;
}

}  // namespace stagger
