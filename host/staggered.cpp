#include "staggered.h"

#include "exec_cpu.h"
#include "staggered_batched.h"

namespace stagger {

struct BatchedSolver::Impl : StaggeredBatched<CpuExec> {};

BatchedSolver::BatchedSolver() : impl_(std::make_unique<Impl>()) {}
BatchedSolver::~BatchedSolver() = default;
BatchedSolver::BatchedSolver(BatchedSolver&&) noexcept = default;
BatchedSolver& BatchedSolver::operator=(BatchedSolver&&) noexcept = default;

SolveResult BatchedSolver::solve(const ContactProblem& problem, const SolverSettings& settings,
                                 const SolveControls& controls) {
  return impl_->solve(problem, settings, controls);
}

}  // namespace stagger
