#include "step/backend.h"

#ifdef STAGGER_HAVE_CUDA
#include "kernels/cuda/device_query.h"
#endif

namespace stagger {

#ifdef STAGGER_HAVE_CUDA
bool cuda_device_available() { return cuda_device_count() > 0; }

long long cuda_memory_used() { return cuda_device_available() ? cuda_device_memory_used() : -1; }

std::string cuda_unavailable_reason() {
  std::string why;
  if (cuda_device_count(&why) <= 0) return "no usable CUDA device: " + why;
  return "";
}
#else
bool cuda_device_available() { return false; }

long long cuda_memory_used() { return -1; }

std::string cuda_unavailable_reason() {
  return "this build has no CUDA support (no CUDA compiler was found when it was configured)";
}
#endif

}  // namespace stagger
