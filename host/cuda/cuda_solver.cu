#include "cuda_solver.h"

#include <stdexcept>
#include <string>

#include "exec_cuda.cuh"
#include "kernels/cuda/device_buffers.h"
#include "staggered_batched.h"

namespace stagger {

struct CudaSolver::Impl : StaggeredBatched<CudaExec> {};

CudaSolver::CudaSolver() {
  std::string why;
  if (!have_cuda_device(&why)) throw std::runtime_error("no usable CUDA device: " + why);
  impl_ = std::make_unique<Impl>();
}

CudaSolver::~CudaSolver() = default;

SolveResult CudaSolver::solve(const ContactProblem& problem, const SolverSettings& settings,
                              const SolveControls& controls) {
  return impl_->solve(problem, settings, controls);
}

}  // namespace stagger
