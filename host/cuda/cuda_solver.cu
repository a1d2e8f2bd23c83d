#include "cuda_solver.h"

#include <stdexcept>
#include <string>

#include "exec_cuda.cuh"
#include "kernels/cuda/device_buffers.h"
#include "solve/staggered_batched.h"

namespace stagger {

struct CudaSolver::Impl {
  StaggeredBatched<CudaExec, double> f64;
  std::unique_ptr<StaggeredBatched<CudaExec, float>> f32;  // made on first use
};

CudaSolver::CudaSolver() {
  std::string why;
  if (!have_cuda_device(&why)) throw std::runtime_error("no usable CUDA device: " + why);
  impl_ = std::make_unique<Impl>();
}

CudaSolver::~CudaSolver() = default;

SolveResult CudaSolver::solve(const ContactProblem& problem, const SolverSettings& settings,
                              const SolveControls& controls) {
  if (controls.precision == Precision::f64) return impl_->f64.solve(problem, settings, controls);
  if (!impl_->f32) impl_->f32 = std::make_unique<StaggeredBatched<CudaExec, float>>();
  return impl_->f32->solve(problem, settings, controls);
}

}  // namespace stagger
