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
// Contacts per block: large enough to amortize a loop, small enough to spread one island over threads.
constexpr int kBlockSize = 256;

ApgdTerms<double> operator+(ApgdTerms<double> a, ApgdTerms<double> b) {
  return {a.d_Ad + b.d_Ad, a.d_d + b.d_d, a.g_dx + b.g_dx, a.residual + b.residual};
}

}  // namespace

void BatchedSolver::resize(const ContactProblem& problem) {
  const int nc = problem.num_contacts(), nb = problem.num_bodies(), ni = problem.num_islands();
  nt_ = problem.friction_dims;
  for (Unknowns* u : {&cur_, &best_, &x_, &y_, &xp_, &gx_, &gy_, &gxp_, &xbest_}) {
    u->alpha.assign(nc, 0.0);
    u->beta.assign(size_t(nc) * nt_, 0.0);
  }
  impulse_.assign(nc, Vec3d{0, 0, 0});
  v_.assign(nb, Vec3d{0, 0, 0});
  w_.assign(nb, Vec3d{0, 0, 0});
  shift_.assign(nc, 0.0);
  apgd_.assign(ni, ApgdIsland<double>{});
  for (auto* v : {&scale_, &error_, &best_error_, &tau_, &lipschitz_contact_, &lipschitz_friction_}) v->assign(ni, 0.0);
  all_.assign(ni, 1);
  active_.assign(ni, 0);
  improved_.assign(ni, 0);
  stats_.assign(ni, IslandStats{});
}

void BatchedSolver::build_blocks() {
  blocks_.clear();
  island_block_begin_.assign(p_.num_islands + 1, 0);
  for (int i = 0; i < p_.num_islands; ++i) {
    island_block_begin_[i] = int(blocks_.size());
    for (int k = p_.island_contact_begin[i]; k < p_.island_contact_begin[i + 1]; k += kBlockSize)
      blocks_.push_back(Block{i, k, std::min(k + kBlockSize, p_.island_contact_begin[i + 1])});
  }
  island_block_begin_[p_.num_islands] = int(blocks_.size());
  block_terms_.assign(blocks_.size(), ApgdTerms<double>{0, 0, 0, 0});
  block_value_.assign(blocks_.size(), 0.0);
}

template <class F>
void BatchedSolver::for_blocks(const std::vector<int>& mask, F&& f) {
  parallel_for(
      int(blocks_.size()),
      [&](int b) {
        if (mask[blocks_[b].island]) f(b, blocks_[b]);
      },
      p_.num_contacts);
}

void BatchedSolver::velocities_from_impulses(const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  parallel_for(p.num_bodies, [&](int s) {
    if (mask[p.body_island[s]]) body_velocity_from_impulses(p, s, impulse_.data(), v_[s], w_[s]);
  });
}

void BatchedSolver::velocities(const Unknowns& gamma, const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  for_blocks(mask, [&](int, const Block& blk) {
    double a, b[kMaxFacets];
    for (int k = blk.begin; k < blk.end; ++k) {
      load_unknowns(p, k, gamma.alpha.data(), gamma.beta.data(), a, b);
      impulse_[k] = world_impulse(p, k, a, b);
    }
  });
  velocities_from_impulses(mask);
}

void BatchedSolver::copy_block(const Unknowns& from, Unknowns& to, const Block& blk) const {
  const size_t nt = size_t(nt_);
  std::copy(from.alpha.begin() + blk.begin, from.alpha.begin() + blk.end, to.alpha.begin() + blk.begin);
  std::copy(from.beta.begin() + blk.begin * nt, from.beta.begin() + blk.end * nt, to.beta.begin() + blk.begin * nt);
}

void BatchedSolver::copy_island_unknowns(const Unknowns& from, Unknowns& to, const std::vector<int>& mask) {
  for_blocks(mask, [&](int, const Block& blk) { copy_block(from, to, blk); });
}

void BatchedSolver::island_errors(const std::vector<int>& mask) {
  const ProblemView<double>& p = p_;
  velocities(cur_, mask);
  for_blocks(mask, [&](int b, const Block& blk) {
    double sum = 0;
    for (int k = blk.begin; k < blk.end; ++k) {
      Vec3d vel = contact_velocity(p, k, v_.data(), w_.data());
      sum += natural_map_residual2(p, k, cur_.alpha.data(), cur_.beta.data(), vel, /*coulomb=*/true);
    }
    block_value_[b] = sum;
  });
  parallel_for(p.num_islands, [&](int i) {
    if (!mask[i]) return;
    double sum = 0;
    for (int b = island_block_begin_[i]; b < island_block_begin_[i + 1]; ++b) sum += block_value_[b];
    error_[i] = std::sqrt(sum) * scale_[i];
  });
}

void BatchedSolver::run_qp(QpPhase phase, const std::vector<int>& run, int max_iterations) {
  const ProblemView<double>& p = p_;
  const int nt = nt_;
  const bool alpha_moves = moves_alpha(phase), beta_moves = moves_beta(phase);

  // Start point: the current unknowns projected onto this phase's set; x = y = x+ = best, and the
  // gradient there.
  for_blocks(run, [&](int, const Block& blk) {
    double a, b[kMaxFacets];
    for (int k = blk.begin; k < blk.end; ++k) {
      load_unknowns(p, k, cur_.alpha.data(), cur_.beta.data(), a, b);
      project_phase(p, k, phase, a, b);
      for (Unknowns* u : {&x_, &y_, &xp_, &xbest_}) store_unknowns(p, k, a, b, u->alpha.data(), u->beta.data());
      impulse_[k] = world_impulse(p, k, a, b);
    }
  });
  velocities_from_impulses(run);
  for_blocks(run, [&](int b, const Block& blk) {
    double sum = 0;
    for (int k = blk.begin; k < blk.end; ++k) {
      Vec3d vel = contact_velocity(p, k, v_.data(), w_.data());
      contact_rows(p, k, vel, shift_[k], gx_.alpha.data(), gx_.beta.data());
      sum += projected_gradient_residual(p, k, phase, x_.alpha.data(), x_.beta.data(), gx_.alpha.data(),
                                         gx_.beta.data());
    }
    copy_block(gx_, gy_, blk);
    block_value_[b] = sum;
  });
  std::vector<double>& lipschitz = phase == QpPhase::friction ? lipschitz_friction_ : lipschitz_contact_;
  parallel_for(p.num_islands, [&](int i) {
    ApgdIsland<double>& s = apgd_[i];
    s = ApgdIsland<double>{};
    if (!run[i]) return;
    double r2 = 0;
    for (int b = island_block_begin_[i]; b < island_block_begin_[i + 1]; ++b) r2 += block_value_[b];
    double diagonal = diagonal_[int(phase)][i];
    // L is at least the largest diagonal entry of the island's Delassus block; the previous
    // estimate (from this step's earlier passes or the previous step) is usually closer.
    s.lipschitz = std::max({lipschitz[i], diagonal, std::numeric_limits<double>::min()});
    s.tolerance = tau_[i];
    s.scale = scale_[i];
    s.best_residual = std::sqrt(r2) * s.scale;
    s.active = s.best_residual > s.tolerance ? 1 : 0;
  });

  // Each iteration: [accept the last trial + next trial point] -> [velocities] ->
  // [gradient + partial sums] -> [control]. A rejected trial (backtracking) only redoes the trial.
  for (;;) {
    bool any = false;
    for (int i = 0; i < p.num_islands; ++i) {
      active_[i] = apgd_[i].active || apgd_[i].accepted;
      any = any || apgd_[i].active;
    }
    for_blocks(active_, [&](int, const Block& blk) {
      const ApgdIsland<double>& s = apgd_[blk.island];
      for (int k = blk.begin; k < blk.end; ++k) {
        if (s.accepted) {
          if (alpha_moves)
            apgd_accept(1, s.momentum, &x_.alpha[k], &y_.alpha[k], &xp_.alpha[k], &gx_.alpha[k], &gy_.alpha[k],
                        &gxp_.alpha[k]);
          if (beta_moves) {
            size_t o = size_t(k) * nt;
            apgd_accept(nt, s.momentum, &x_.beta[o], &y_.beta[o], &xp_.beta[o], &gx_.beta[o], &gy_.beta[o],
                        &gxp_.beta[o]);
          }
        }
        if (s.active)
          apgd_trial_point(p, k, phase, s.lipschitz, y_.alpha.data(), y_.beta.data(), gy_.alpha.data(),
                           gy_.beta.data(), xp_.alpha.data(), xp_.beta.data(), impulse_.data());
      }
      if (s.accepted && s.improved) copy_block(x_, xbest_, blk);
    });
    if (!any) break;
    for (int i = 0; i < p.num_islands; ++i) active_[i] = apgd_[i].active;
    velocities_from_impulses(active_);
    for_blocks(active_, [&](int b, const Block& blk) {
      ApgdTerms<double> sum{0, 0, 0, 0};
      for (int k = blk.begin; k < blk.end; ++k) {
        Vec3d vel = contact_velocity(p, k, v_.data(), w_.data());
        contact_rows(p, k, vel, shift_[k], gxp_.alpha.data(), gxp_.beta.data());
        sum = sum + apgd_terms(p, k, phase, x_.alpha.data(), x_.beta.data(), y_.alpha.data(), y_.beta.data(),
                               xp_.alpha.data(), xp_.beta.data(), gy_.alpha.data(), gy_.beta.data(),
                               gxp_.alpha.data(), gxp_.beta.data());
      }
      block_terms_[b] = sum;
    });
    parallel_for(p.num_islands, [&](int i) {
      if (!active_[i]) {
        apgd_[i].accepted = apgd_[i].improved = 0;
        return;
      }
      ApgdTerms<double> sum{0, 0, 0, 0};
      for (int b = island_block_begin_[i]; b < island_block_begin_[i + 1]; ++b) sum = sum + block_terms_[b];
      apgd_control(apgd_[i], sum, max_iterations);
    });
  }
  for (int i = 0; i < p.num_islands; ++i) {
    if (!run[i]) continue;
    lipschitz[i] = apgd_[i].lipschitz;
    std::vector<double>& peak = phase == QpPhase::friction ? peak_friction_ : peak_contact_;
    peak[i] = std::max(peak[i], apgd_[i].peak_lipschitz);
    stats_[i].inner_iterations += apgd_[i].iterations;
  }
  copy_island_unknowns(xbest_, cur_, run);
}

void BatchedSolver::trace(const SolveControls& c, int iteration, const std::vector<int>& outer) const {
  if (c.trace_min_contacts <= 0) return;
  for (int i = 0; i < p_.num_islands; ++i) {
    int contacts = p_.island_contact_begin[i + 1] - p_.island_contact_begin[i];
    if (contacts < c.trace_min_contacts || (!outer[i] && iteration != stats_[i].outer_iterations)) continue;
    std::fprintf(stderr, "  island %d (%d contacts) outer %d: error %.3e  tau %.2e  inner total %d  L %.3g/%.3g%s\n", i,
                 contacts, iteration, error_[i], tau_[i], stats_[i].inner_iterations, lipschitz_contact_[i],
                 lipschitz_friction_[i], outer[i] ? "" : "  (done)");
  }
}

bool BatchedSolver::record_outer_iteration(int iteration, double tolerance, std::vector<int>& outer) {
  bool any = false;
  for (int i = 0; i < p_.num_islands; ++i) {
    improved_[i] = 0;
    if (!outer[i]) continue;
    stats_[i].outer_iterations = iteration;
    if (error_[i] < best_error_[i] || !std::isfinite(best_error_[i])) {  // errors are not monotone
      best_error_[i] = error_[i];
      improved_[i] = 1;
    }
    if (error_[i] <= tolerance) {
      stats_[i].converged = true;
      outer[i] = 0;
    }
    any = any || outer[i];
  }
  copy_island_unknowns(cur_, best_, improved_);
  return any;
}

void BatchedSolver::solve_staggered(const SolverSettings& s, const SolveControls& c) {
  const int ni = p_.num_islands;
  // The first inner tolerance comes from the warm start's error (SOLVER.md's err = +inf would accept
  // a warm start just under the tolerance unrefined, which lets a sliding block drift 2% off), but
  // never tighter than a tenth of the outer tolerance: a good warm start then costs few iterations.
  island_errors(all_);
  for (int i = 0; i < ni; ++i) error_[i] = std::max(error_[i], s.tolerance);
  std::vector<int> outer = all_;
  trace(c, 0, outer);
  std::fill(best_error_.begin(), best_error_.end(), std::numeric_limits<double>::infinity());
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    for (int i = 0; i < ni; ++i)
      if (outer[i]) tau_[i] = c.adaptive_inner_tolerance ? std::max(s.inner_tolerance, 0.1 * error_[i]) : s.inner_tolerance;
    run_qp(QpPhase::contact, outer, s.max_inner_iterations);
    island_errors(outer);
    bool any = record_outer_iteration(it, s.tolerance, outer);
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
    for_blocks(mask, [&](int, const Block& blk) {
      for (int k = blk.begin; k < blk.end; ++k) {
        double vt[kMaxFacets];
        friction_rows(p, contact_velocity(p, k, v_.data(), w_.data()), vt);
        shift_[k] = coulomb_shift(p, k, vt);
      }
    });
  };
  island_errors(all_);  // also leaves the warm start's velocities in v_, w_
  update_shift(all_);
  for (int it = 1; it <= s.max_outer_iterations; ++it) {
    for (int i = 0; i < ni; ++i)
      if (outer[i]) tau_[i] = std::max(s.inner_tolerance, 0.1 * error_[i]);
    run_qp(QpPhase::both, outer, s.max_inner_iterations);
    island_errors(outer);
    bool any = record_outer_iteration(it, s.tolerance, outer);
    if (!any) break;
    update_shift(outer);
  }
  copy_island_unknowns(best_, cur_, all_);
  for (int i = 0; i < ni; ++i) stats_[i].error = best_error_[i];
}

SolveResult BatchedSolver::solve(const ContactProblem& problem, const SolverSettings& settings,
                                 const SolveControls& controls) {
  p_ = problem.view();
  resize(problem);
  build_blocks();
  const ProblemView<double>& p = p_;
  const int nt = nt_;

  // Per island, the largest Delassus diagonal entry of each phase's rows: a lower bound of L.
  for (auto& d : diagonal_) d.assign(p.num_islands, 0.0);
  parallel_for(p.num_islands, [&](int i) {
    for (int k = p.island_contact_begin[i]; k < p.island_contact_begin[i + 1]; ++k)
      for (QpPhase phase : {QpPhase::contact, QpPhase::friction, QpPhase::both})
        diagonal_[int(phase)][i] = std::max(diagonal_[int(phase)][i], delassus_diagonal_max(p, k, phase));
  });

  // Island scales 1 / max(|b|, b_floor) from the free (predictor) velocities.
  for_blocks(all_, [&](int b, const Block& blk) {
    double sum = 0;
    for (int k = blk.begin; k < blk.end; ++k) sum += free_velocity_norm2(p, k, contact_velocity(p, k, p.v_pred, p.w_pred));
    block_value_[b] = sum;
  });
  parallel_for(p.num_islands, [&](int i) {
    double sum = 0;
    for (int b = island_block_begin_[i]; b < island_block_begin_[i + 1]; ++b) sum += block_value_[b];
    int rows = (p.island_contact_begin[i + 1] - p.island_contact_begin[i]) * (1 + nt);
    scale_[i] = 1.0 / std::max(std::sqrt(sum), kFreeVelocityFloor * std::sqrt(double(rows)));
  });

  // Warm start, projected: alpha >= 0, beta in its friction set for that alpha.
  if (!problem.alpha_warm.empty()) cur_.alpha = problem.alpha_warm;
  if (!problem.beta_warm.empty()) cur_.beta = problem.beta_warm;
  for_blocks(all_, [&](int, const Block& blk) {
    double a, b[kMaxFacets];
    for (int k = blk.begin; k < blk.end; ++k) {
      load_unknowns(p, k, cur_.alpha.data(), cur_.beta.data(), a, b);
      project_phase(p, k, QpPhase::contact, a, b);
      project_phase(p, k, QpPhase::friction, a, b);
      store_unknowns(p, k, a, b, cur_.alpha.data(), cur_.beta.data());
    }
  });
  peak_contact_.assign(p.num_islands, 0.0);
  peak_friction_.assign(p.num_islands, 0.0);
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
  // The next step starts from the largest L this step accepted, not from the last (relaxed) one: a
  // start below what the problem needs costs a full product per doubling (measured: 16% slower pours).
  result.lipschitz_contact = peak_contact_;
  result.lipschitz_friction = peak_friction_;
  return result;
}

}  // namespace stagger
