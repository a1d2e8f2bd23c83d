// The batched CPU backend of the solve stage: the generic batched Staggered Projections
// (host/solve/staggered_batched.h) run by the OpenMP executor (host/step/exec_cpu.h). The CUDA backend
// (host/cuda/cuda_solver.h) runs the same algorithm with kernels.
#pragma once

#include <memory>

#include "solve/contact_problem.h"

namespace stagger {

class BatchedSolver {
 public:
  BatchedSolver();
  ~BatchedSolver();
  BatchedSolver(BatchedSolver&&) noexcept;
  BatchedSolver& operator=(BatchedSolver&&) noexcept;

  SolveResult solve(const ContactProblem& problem, const SolverSettings& settings, const SolveControls& controls = {});

 private:
  struct Impl;  // work arrays kept between steps
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagger
