#include "cuda_collide.h"

#include <stdexcept>
#include <string>

#include "collide/collide_batched.h"
#include "exec_cuda.cuh"
#include "kernels/cuda/device_buffers.h"

namespace stagger {

struct CudaCollide::Impl : CollideBatched<CudaExec> {};

CudaCollide::CudaCollide() {
  std::string why;
  if (!have_cuda_device(&why)) throw std::runtime_error("no usable CUDA device: " + why);
  impl_ = std::make_unique<Impl>();
}

CudaCollide::~CudaCollide() = default;

void CudaCollide::find_pairs(const Bodies& bodies, const ContactMargins& margins) { impl_->find_pairs(bodies, margins); }

void CudaCollide::narrowphase(Contacts& out) { impl_->narrowphase(out); }

}  // namespace stagger
