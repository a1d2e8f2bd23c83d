// Host-side helpers of the CUDA launchers: device buffers freed on scope exit and the first CUDA
// error kept as the reason a launch could not run (callers then report "skipped" or fail).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace stagger {

// Whether a CUDA device can be used; else why not.
inline bool have_cuda_device(std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why) *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

class DeviceBuffers {
 public:
  explicit DeviceBuffers(std::string* why) : why_(why) {}
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() {
    for (void* b : buffers_) cudaFree(b);
  }
  bool ok() const { return ok_; }
  // Records the first error; returns whether everything so far succeeded.
  bool check(cudaError_t e) {
    if (e != cudaSuccess && ok_) {
      ok_ = false;
      if (why_) *why_ = cudaGetErrorString(e);
    }
    return ok_;
  }
  // n elements on the device, copied from `host` unless it is null (left uninitialized then).
  template <class T>
  T* upload(const T* host, std::size_t n) {
    void* d = nullptr;
    if (!check(cudaMalloc(&d, n * sizeof(T) + 16))) return nullptr;  // +16: never a zero-size allocation
    buffers_.push_back(d);
    if (host) check(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return static_cast<T*>(d);
  }
  template <class T>
  T* upload(const std::vector<T>& host) {
    return upload(host.data(), host.size());
  }
  template <class T>
  void download(const T* device, std::vector<T>& host) {
    if (ok_) check(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  std::string* why_;
  bool ok_ = true;
  std::vector<void*> buffers_;
};

}  // namespace stagger
