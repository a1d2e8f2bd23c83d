// The batched solve stage: Staggered Projections (and the CCP and successive-relaxation variants)
// over all islands at once. Every step of an APGD iteration is one element loop (a "launch") over
// contacts, bodies or islands that calls the kernels/ functions the CUDA backend launches; islands
// that are done cost nothing. Work arrays are kept between steps.
#pragma once

#include <vector>

#include "contact_problem.h"
#include "kernels/apgd.h"

namespace stagger {

class BatchedSolver {
 public:
  SolveResult solve(const ContactProblem& problem, const SolverSettings& settings, const SolveControls& controls = {});

 private:
  struct Unknowns {
    std::vector<double> alpha, beta;
  };
  // A run of at most kBlockSize contacts of one island: the unit of parallel work and of the
  // partial sums behind every per-island reduction, so results do not depend on the thread count.
  struct Block {
    int island, begin, end;
  };

  void resize(const ContactProblem& problem);
  void build_blocks();
  // Launches over the blocks of islands with mask[i] != 0, and their per-island sums.
  template <class F>
  void for_blocks(const std::vector<int>& mask, F&& f);
  // impulse_ = world impulse of gamma, then u = u^p + M^-1 J^T gamma for the bodies of masked islands.
  void velocities(const Unknowns& gamma, const std::vector<int>& mask);
  void velocities_from_impulses(const std::vector<int>& mask);
  // One QP of `phase` on the islands with run[i] != 0, from cur_ to tolerance tau_[i]; result in cur_.
  void run_qp(QpPhase phase, const std::vector<int>& run, int max_iterations);
  // Natural-map (Coulomb) error of cur_ for masked islands, into error_[i]; leaves cur_'s velocities.
  void island_errors(const std::vector<int>& mask);
  void copy_island_unknowns(const Unknowns& from, Unknowns& to, const std::vector<int>& mask);
  void copy_block(const Unknowns& from, Unknowns& to, const Block& blk) const;
  // After an outer iteration's error evaluation: count it, keep each island's best pair (errors are
  // not monotone), retire the islands that met the tolerance. Returns whether any island goes on.
  bool record_outer_iteration(int iteration, double tolerance, std::vector<int>& outer);

  void solve_staggered(const SolverSettings& s, const SolveControls& c);
  void solve_ccp(const SolverSettings& s);
  void solve_successive_relaxation(const SolverSettings& s);
  void trace(const SolveControls& c, int iteration, const std::vector<int>& outer) const;

  ProblemView<double> p_;
  int nt_ = 2;
  std::vector<Block> blocks_;
  std::vector<int> island_block_begin_;
  Unknowns cur_, best_, x_, y_, xp_, gx_, gy_, gxp_, xbest_;
  std::vector<Vec3d> impulse_, v_, w_;
  std::vector<double> shift_;  // successive relaxation's normal shift per contact
  std::vector<ApgdTerms<double>> block_terms_;
  std::vector<double> block_value_;
  std::vector<ApgdIsland<double>> apgd_;
  std::vector<double> scale_, error_, best_error_, tau_, lipschitz_contact_, lipschitz_friction_;
  std::vector<double> peak_contact_, peak_friction_;  // per island: the largest L accepted this step (next step's hint)
  std::vector<double> diagonal_[3];  // per QpPhase and island: largest diagonal entry of W
  std::vector<int> all_, active_, improved_;
  std::vector<IslandStats> stats_;
};

}  // namespace stagger
