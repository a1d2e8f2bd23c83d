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

}  // namespace stagger
