// The batched solve stage: Staggered Projections (and the CCP and successive-relaxation variants)
// over all islands at once, each step of each APGD iteration an element loop over contacts, bodies
// or islands that calls the kernels/ functions the CUDA backend launches. Work arrays are kept
// between steps.
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

  void resize(const ContactProblem& problem);
  // u = u^p + M^-1 J^T gamma for the bodies of islands with mask[i] != 0.
  void velocities(const Unknowns& gamma, const std::vector<int>& mask);
  // g = J u - c (+ shift) on the contacts of masked islands, from the current velocities.
  void gradient(Unknowns& g, const std::vector<int>& mask);
  // One QP of `phase` on the islands with run[i] != 0, from cur_ to tolerance tau_[i]; result in cur_.
  void run_qp(QpPhase phase, const std::vector<int>& run, int max_iterations);
  // Natural-map (Coulomb) error of cur_ for masked islands, into error_[i]; leaves the velocities of cur_.
  void island_errors(const std::vector<int>& mask);
  void copy_island_unknowns(const Unknowns& from, Unknowns& to, const std::vector<int>& mask);

  void solve_staggered(const SolverSettings& s, const SolveControls& c);
  void trace(const SolveControls& c, int iteration, const std::vector<int>& outer) const;
  void solve_ccp(const SolverSettings& s);
  void solve_successive_relaxation(const SolverSettings& s);

  ProblemView<double> p_;
  const ContactProblem* problem_ = nullptr;
  int nt_ = 2;
  Unknowns cur_, best_, x_, y_, xp_, gx_, gy_, gxp_, xbest_;
  std::vector<Vec3d> v_, w_;
  std::vector<double> shift_;         // successive relaxation's normal shift per contact
  std::vector<ApgdTerms<double>> terms_;
  std::vector<double> contact_value_;  // per-contact scratch for island sums
  std::vector<ApgdIsland<double>> apgd_;
  std::vector<double> scale_, error_, best_error_, tau_, lipschitz_contact_, lipschitz_friction_;
  std::vector<int> all_, active_, improved_;
  std::vector<IslandStats> stats_;
};

}  // namespace stagger
