#include "backend.h"

#ifdef STAGGER_HAVE_CUDA
#include "kernels/cuda/device_query.h"
#endif

namespace stagger {

#ifdef STAGGER_HAVE_CUDA
bool cuda_device_available() { return cuda_device_count() > 0; }

std::string cuda_unavailable_reason() {
  std::string why;
  if (cuda_device_count(&why) <= 0) return "no usable CUDA device: " + why;
  return "";
}
#else
bool cuda_device_available() { return false; }

std::string cuda_unavailable_reason() {
  return "this build has no CUDA support (no CUDA compiler was found when it was configured)";
}
#endif

}  // namespace stagger
