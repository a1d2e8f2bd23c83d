#include <cuda_runtime.h>

#include "device_query.h"

namespace stagger {

int cuda_device_count(std::string* why) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  // Without a GPU, the runtime answers cudaErrorInsufficientDriver or cudaErrorNoDevice: "no device".
  if (status != cudaSuccess) {
    if (why) *why = cudaGetErrorString(status);
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device found";
  return count;
}

long long cuda_device_memory_used() {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return -1;
  return static_cast<long long>(total_bytes - free_bytes);
}

}  // namespace stagger
