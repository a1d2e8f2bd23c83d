#include "solve/staggered.h"

#include "step/exec_cpu.h"
#include "solve/staggered_batched.h"

namespace stagger {

struct BatchedSolver::Impl {
  StaggeredBatched<CpuExec, double> f64;
  std::unique_ptr<StaggeredBatched<CpuExec, float>> f32;  // made on first use
};

BatchedSolver::BatchedSolver() : impl_(std::make_unique<Impl>()) {}
BatchedSolver::~BatchedSolver() = default;
BatchedSolver::BatchedSolver(BatchedSolver&&) noexcept = default;
BatchedSolver& BatchedSolver::operator=(BatchedSolver&&) noexcept = default;

SolveResult BatchedSolver::solve(const ContactProblem& problem, const SolverSettings& settings,
                                 const SolveControls& controls) {
  if (controls.precision == Precision::f64) return impl_->f64.solve(problem, settings, controls);
  if (!impl_->f32) impl_->f32 = std::make_unique<StaggeredBatched<CpuExec, float>>();
  return impl_->f32->solve(problem, settings, controls);
}

}  // namespace stagger
