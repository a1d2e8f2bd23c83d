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

double cuda_copy_bandwidth(long long bytes) {
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess) return -1;
  if (cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    return -1;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int r = 0; r < 6; ++r) {
    cudaEventRecord(start);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0 && ms < best) best = ms;  // the first copy warms up
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return cudaGetLastError() == cudaSuccess && best < 1e30f ? 2.0 * double(bytes) / (best * 1e-3) / 1e9 : -1;
}

}  // namespace stagger
