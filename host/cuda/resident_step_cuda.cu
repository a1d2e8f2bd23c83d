// The CUDA backend's step: the resident step (host/step/resident_step_batched.h) run by the CUDA executor.
#include <stdexcept>
#include <string>

#include "exec_cuda.cuh"
#include "kernels/cuda/device_buffers.h"
#include "step/resident_step_batched.h"

namespace stagger {

std::unique_ptr<ResidentStep> make_resident_step_cuda(const Bodies& bodies) {
  std::string why;
  if (!have_cuda_device(&why)) throw std::runtime_error("no usable CUDA device: " + why);
  return std::make_unique<ResidentStepOn<CudaExec>>(bodies);
}

}  // namespace stagger
