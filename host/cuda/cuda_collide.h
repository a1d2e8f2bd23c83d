// The CUDA backend's broadphase and narrowphase: the batched collision stages
// (host/collide/collide_batched.h) run by the CUDA executor. Plain C++ header, so g++ code can hold one.
#pragma once

#include <memory>

#include "step/bodies.h"
#include "collide/broadphase.h"
#include "collide/narrowphase.h"

namespace stagger {

class CudaCollide {
 public:
  CudaCollide();  // throws std::runtime_error when no CUDA device can be used
  ~CudaCollide();
  CudaCollide(const CudaCollide&) = delete;
  CudaCollide& operator=(const CudaCollide&) = delete;

  // The broadphase stage: uploads the bodies, finds the candidate pairs (kept on the device).
  void find_pairs(const Bodies& bodies, const ContactMargins& margins);
  // The narrowphase stage: the pairs' contacts, downloaded for the host's islands.
  void narrowphase(Contacts& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagger
