// The CUDA backend of the solve stage: the generic batched Staggered Projections
// (host/solve/staggered_batched.h) run by the CUDA executor (host/cuda/exec_cuda.cuh): the problem is
// uploaded, every APGD iteration runs as kernels over all unconverged islands, and the impulses and
// velocities come back. This header is plain C++, so g++-compiled code can hold one.
#pragma once

#include <memory>

#include "solve/contact_problem.h"

namespace stagger {

class CudaSolver {
 public:
  CudaSolver();  // throws std::runtime_error when no CUDA device can be used
  ~CudaSolver();
  CudaSolver(const CudaSolver&) = delete;
  CudaSolver& operator=(const CudaSolver&) = delete;

  SolveResult solve(const ContactProblem& problem, const SolverSettings& settings, const SolveControls& controls = {});

 private:
  struct Impl;  // device work arrays kept between steps
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagger
