// The CUDA backend's executor: the generic batched solve (host/solve/staggered_batched.h) with its arrays
// in device memory (Thrust vectors) and its element loops as kernels. Each kernel is a thin wrapper:
// index, bounds, island-done check, call the loop body (which calls the kernels/ element functions).
// Only this directory and kernels/cuda/ hold CUDA code.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <thrust/copy.h>
#include <thrust/device_allocator.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cublas_loader.h"
#include "solve/contact_block.h"
#include "solve/contact_problem.h"
#include "step/executor.h"

namespace stagger {

namespace cuda_exec {

constexpr int kThreads = 256;
constexpr int kLargeIslandBlocks = 256;  // above: a thread block reduces the island, not a warp

template <class F>
__global__ void for_each_kernel(int n, F f) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

// One warp per ContactBlock (of at most 32 contacts), one lane per contact, 8 blocks per thread
// block; a done island's warps exit at once.
__device__ inline int warp_index() { return int(blockIdx.x) * (kThreads / 32) + int(threadIdx.x) / 32; }
__device__ inline int lane_index() { return int(threadIdx.x) % 32; }

// `list`: the blocks to run (host/solve/active_lists.h), or nullptr for all of them. f(k, shared(island)):
// what a block's contacts share (CpuExec::for_contacts_sharing), read by each lane.
template <class S, class F>
__global__ void for_contacts_kernel(const ContactBlock* blocks, int num_blocks, const int* list, const int* mask,
                                    S shared, F f) {
  const int w = warp_index();
  if (w >= num_blocks) return;
  const ContactBlock blk = blocks[list ? list[w] : w];
  if (!mask[blk.island]) return;
  const int k = blk.begin + lane_index();
  if (k < blk.end) f(k, shared(blk.island));
}

// The same, with the block's values reduced by the warp (a fixed order: the result is the same from
// run to run). The tests above are uniform over the warp, so every lane reaches the reduction or none.
template <class R, class S, class F, class Op>
__global__ void block_reduce_kernel(const ContactBlock* blocks, int num_blocks, const int* list, const int* mask,
                                    S shared, F f, Op op, R identity, R* out) {
  using Reduce = cub::WarpReduce<R>;
  __shared__ typename Reduce::TempStorage storage[kThreads / 32];
  const int w = warp_index();
  if (w >= num_blocks) return;
  const int b = list ? list[w] : w;
  const ContactBlock blk = blocks[b];
  if (!mask[blk.island]) return;
  const int k = blk.begin + lane_index();
  R value = k < blk.end ? f(k, shared(blk.island)) : identity;
  R total = Reduce(storage[threadIdx.x / 32]).Reduce(value, op);
  if (lane_index() == 0) out[b] = total;
}

// One warp per island: its lanes stride over the island's blocks, then a warp reduction (a fixed
// order for a given island size): the many small islands of a pile. Islands of more than
// kLargeIslandBlocks blocks are skipped here and reduced by a whole thread block each (below).
template <class R, class Op>
__global__ void island_reduce_kernel(int num_islands, const int* list, const int* blocks_of, const int* mask,
                                     const R* values, Op op, R identity, R* out) {
  using Reduce = cub::WarpReduce<R>;
  __shared__ typename Reduce::TempStorage storage[kThreads / 32];
  const int w = warp_index(), lane = lane_index();
  if (w >= num_islands) return;
  const int i = list ? list[w] : w;
  if (!mask[i]) return;  // uniform over the warp
  if (blocks_of[i + 1] - blocks_of[i] > kLargeIslandBlocks) return;
  R sum = identity;
  for (int b = blocks_of[i] + lane; b < blocks_of[i + 1]; b += 32) sum = op(sum, values[b]);
  R total = Reduce(storage[threadIdx.x / 32]).Reduce(sum, op);
  if (lane == 0) out[i] = total;
}

// One thread block per large island (a list), for islands of thousands of blocks.
template <class R, class Op>
__global__ void large_island_reduce_kernel(const int* islands, const int* blocks_of, const int* mask, const R* values,
                                           Op op, R identity, R* out) {
  using Reduce = cub::BlockReduce<R, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const int i = islands[blockIdx.x];
  if (!mask[i]) return;  // uniform over the thread block
  R sum = identity;
  for (int b = blocks_of[i] + int(threadIdx.x); b < blocks_of[i + 1]; b += kThreads) sum = op(sum, values[b]);
  R total = Reduce(storage).Reduce(sum, op);
  if (threadIdx.x == 0) out[i] = total;
}

// *count += the number of non-zero flags: a block reduction, then one integer atomic per thread
// block into device memory (the sum does not depend on the order of the atomics).
__global__ inline void count_kernel(int n, const int* flags, int* count) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int total = Reduce(storage).Sum(i < n && flags[i] != 0 ? 1 : 0);
  if (threadIdx.x == 0 && total > 0) atomicAdd(count, total);
}

// Device memory for the executor's arrays. After a device fault every later cudaFree reports the
// fault again; Thrust's own allocator then throws from a destructor while the first error unwinds,
// which terminates the program before the run can report the fault and keep its last good state.
// This one frees without checking (the fault has been reported already).
template <class T>
struct Allocator : thrust::device_allocator<T> {
  using Base = thrust::device_allocator<T>;
  using pointer = typename Base::pointer;
  using size_type = typename Base::size_type;
  template <class U>
  struct rebind {
    using other = Allocator<U>;
  };
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) {}
  pointer allocate(size_type n) {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, n * sizeof(T));
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("CUDA: cannot allocate ") + std::to_string(n * sizeof(T)) +
                               " bytes: " + cudaGetErrorString(e));
    return pointer(static_cast<T*>(p));
  }
  void deallocate(pointer p, size_type) noexcept { cudaFree(thrust::raw_pointer_cast(p)); }
};

// Temporary storage for Thrust's algorithms (scans, sorts, reductions), kept and reused for the
// executor's life. Thrust's own temporaries are freed by a cudaFree that throws after a device fault,
// from a destructor (noexcept) while the fault's first exception unwinds: std::terminate, not
// "exit 1, last good state kept". Here a temporary goes back to the cache without a CUDA call, and
// the cached blocks are freed, unchecked, only when the executor goes (the fault is reported by then).
// It also spares every `any` check an allocation and a free.
class TemporaryCache {
 public:
  using value_type = char;
  TemporaryCache() = default;
  TemporaryCache(const TemporaryCache&) = delete;
  TemporaryCache& operator=(const TemporaryCache&) = delete;
  ~TemporaryCache() {
    for (const Block& b : blocks_) cudaFree(b.data);
  }
  char* allocate(std::ptrdiff_t bytes) {
    for (Block& b : blocks_)
      if (!b.used && b.bytes >= bytes) {
        b.used = true;
        return b.data;
      }
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, size_t(bytes));
    if (e != cudaSuccess)
      throw std::runtime_error("CUDA: cannot allocate " + std::to_string(bytes) + " temporary bytes: " +
                               cudaGetErrorString(e));
    blocks_.push_back(Block{static_cast<char*>(p), bytes, true});
    return blocks_.back().data;
  }
  void deallocate(char* p, std::size_t) noexcept {
    for (Block& b : blocks_)
      if (b.data == p) b.used = false;
  }

 private:
  struct Block {
    char* data;
    std::ptrdiff_t bytes;
    bool used;
  };
  std::vector<Block> blocks_;
};

}  // namespace cuda_exec

struct CudaExec : PlainContactLoops<CudaExec> {
  template <class T>
  using Array = thrust::device_vector<T, cuda_exec::Allocator<T>>;
  // "Is any island still iterating?" costs a round trip to the host: ask every 8 iterations.
  // The passes in between over islands that are all done change nothing (see run_qp). A block is a
  // warp (see ContactBlock). Fixed: the kernels are written for it (SolveControls' shape is the CPU's).
  static constexpr bool kHostMemory = false;
  // No polish (host/solve/staggered_batched.h): Gauss-Seidel sweeps are sequential within an island, so
  // one GPU thread would sweep it (a 10,000-contact island: ~10^6 dependent local solves per outer
  // iteration) against an APGD iteration spread over thousands; a coloured, parallel sweep would be needed.
  static constexpr bool kPolish = false;
  static constexpr int block_size() { return kGpuBlockSize; }
  static constexpr int loop_check_interval() { return kGpuLoopCheckInterval; }
  void configure(int, int, int = -1) {}
  // Islands of at most this many contacts take the dense path (host/solve/dense_islands.h). Off until a
  // GPU benchmark (bench/run_cuda.sh, the dense sweep) says where it pays: by bytes read per
  // iteration it can only win for islands of about 4 contacts or fewer (docs/backends.md).
  static constexpr int kDenseMaxContacts = 0;

  // Thread blocks for one warp per item.
  static int warp_grid(int items) {
    const int per_block = cuda_exec::kThreads / 32;
    return (items + per_block - 1) / per_block;
  }

  // STAGGER_CUDA_SYNC=1 synchronizes and checks after every launch (debugging: the error is then
  // reported at the launch that caused it; not while a graph is captured).
  bool sync_every_launch = std::getenv("STAGGER_CUDA_SYNC") != nullptr;
  // STAGGER_CUDA_GRAPHS=1: repeat() captures the iterations between two checks as a CUDA graph and
  // replays it (see repeat). Off by default until a GPU has measured it against plain launches.
  bool use_graphs = std::getenv("STAGGER_CUDA_GRAPHS") != nullptr && std::atoi(std::getenv("STAGGER_CUDA_GRAPHS")) != 0;
  bool capturing_ = false;

  // Every launch, copy and Thrust call of the executor runs on one stream (a graph is captured from a
  // stream). It is a blocking stream, so work other code queues on the legacy default stream (Thrust
  // vector assignments, cudaMemcpy) stays ordered with it. It is also the stream of every other
  // executor object of the process: the resident step, its collision stages and its solvers each hold
  // their own CudaExec and hand arrays to one another without a synchronisation between them, which
  // is only ordered when their launches share a stream (two blocking streams are not ordered with
  // each other). Made on first use; destroyed with the last executor holding it.
  using StreamHolder = std::shared_ptr<std::remove_pointer_t<cudaStream_t>>;
  StreamHolder stream_holder_;
  StreamHolder process_stream() {
    static std::mutex mutex;
    static std::weak_ptr<std::remove_pointer_t<cudaStream_t>> shared;
    std::lock_guard<std::mutex> lock(mutex);
    StreamHolder holder = shared.lock();
    if (!holder) {
      cudaStream_t s = nullptr;
      check(cudaStreamCreate(&s));
      holder.reset(s, [](cudaStream_t t) { cudaStreamDestroy(t); });
      shared = holder;
    }
    return holder;
  }
  cudaStream_t stream() {
    if (!stream_holder_) stream_holder_ = process_stream();
    return stream_holder_.get();
  }

  // Thrust's temporaries come from here (TemporaryCache), shared by copies of the executor; every
  // Thrust call runs on this policy, after a check of the errors launches have left.
  std::shared_ptr<cuda_exec::TemporaryCache> temporaries_ = std::make_shared<cuda_exec::TemporaryCache>();
  auto thrust_policy() { return thrust::cuda::par(*temporaries_).on(stream()); }

  template <class T>
  static T* ptr(Array<T>& a) { return thrust::raw_pointer_cast(a.data()); }
  template <class T>
  static const T* ptr(const Array<T>& a) { return thrust::raw_pointer_cast(a.data()); }
  template <class T>
  static void fill(Array<T>& a, std::size_t n, const T& value) { a.assign(n, value); }
  template <class T>
  static void upload(const std::vector<T>& host, Array<T>& a) { a = host; }
  template <class T>
  static void download(const Array<T>& a, std::vector<T>& host) {
    host.resize(a.size());
    thrust::copy(a.begin(), a.end(), host.begin());
  }
  // n elements from device memory to the host's and back, after the stream's work (the exact solve's
  // staging of the few islands it takes: each copy a few microseconds).
  template <class T>
  void copy_to_host(const T* from, std::size_t n, T* to) {
    if (n == 0) return;
    check(cudaStreamSynchronize(stream()));
    check(cudaMemcpy(to, from, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  template <class T>
  void copy_from_host(const T* from, std::size_t n, T* to) {
    if (n == 0) return;
    check(cudaMemcpyAsync(to, from, n * sizeof(T), cudaMemcpyHostToDevice, stream()));
    check(cudaStreamSynchronize(stream()));  // the host buffer may go once this returns
  }

  void check(cudaError_t e) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + cudaGetErrorString(e));
  }
  void check(const char* what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && sync_every_launch && !capturing_) e = cudaStreamSynchronize(stream());
    if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
  }

  template <class F>
  void for_each(int n, F f, long long /*work: one thread per element regardless*/ = -1) {
    if (n <= 0) return;
    cuda_exec::for_each_kernel<<<(n + cuda_exec::kThreads - 1) / cuda_exec::kThreads, cuda_exec::kThreads, 0, stream()>>>(
        n, f);
    check("for_each launch");
  }

  // for_contacts and block_reduce: PlainContactLoops, through the two below.
  template <class S, class F>
  void for_contacts_sharing(const ContactBlock* blocks, int num_blocks, const int* mask, int, S shared, F f,
                            const int* list = nullptr) {
    if (num_blocks <= 0) return;
    cuda_exec::for_contacts_kernel<<<warp_grid(num_blocks), cuda_exec::kThreads, 0, stream()>>>(blocks, num_blocks, list,
                                                                                              mask, shared, f);
    check("for_contacts launch");
  }

  template <class S, class R, class F, class Op>
  void block_reduce_sharing(const ContactBlock* blocks, int num_blocks, const int* mask, int, S shared, F f, Op op,
                            R identity, R* out, const int* list = nullptr) {
    if (num_blocks <= 0) return;
    cuda_exec::block_reduce_kernel<<<warp_grid(num_blocks), cuda_exec::kThreads, 0, stream()>>>(
        blocks, num_blocks, list, mask, shared, f, op, identity, out);
    check("block_reduce launch");
  }

  // Dense islands (host/solve/dense_islands.h): one strided-batched cuBLAS GEMV per size bucket. It
  // computes every island of the bucket, masked or not (an unmasked island's x has not changed, so
  // neither does its y). The handle is made on first use and shared by copies of the executor.
  // cuBLAS itself is opened on that first use (host/cuda/cublas_loader.h).
  std::shared_ptr<std::remove_pointer_t<cublasHandle_t>> cublas_;
  void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cuBLAS ") + what + ": " + cublas_api().status_string(s));
  }
  template <class T>
  void batched_gemv(int rows, int count, const T* a, const T* x, T* y, const int*, const int*) {
    if (count <= 0) return;
    const CublasApi& api = cublas_api();
    if (!cublas_) {
      cublasHandle_t handle = nullptr;
      check(api.create(&handle), "create");
      cublas_.reset(handle, [destroy = api.destroy](cublasHandle_t h) { destroy(h); });
      check(api.set_stream(handle, stream()), "set stream");
    }
    const T one = T(1), zero = T(0);
    const long long matrix_stride = (long long)rows * rows, vector_stride = rows;
    if constexpr (std::is_same_v<T, double>)
      check(api.dgemv_strided_batched(cublas_.get(), CUBLAS_OP_N, rows, rows, &one, a, rows, matrix_stride, x, 1,
                                      vector_stride, &zero, y, 1, vector_stride, count),
            "gemv");
    else
      check(api.sgemv_strided_batched(cublas_.get(), CUBLAS_OP_N, rows, rows, &one, a, rows, matrix_stride, x, 1,
                                      vector_stride, &zero, y, 1, vector_stride, count),
            "gemv");
    check("batched_gemv");
  }

  // The islands whose totals a thread block reduces (see island_reduce_kernel).
  Array<int> large_islands_;
  int num_large_islands_ = 0;
  void plan_islands(const std::vector<int>& blocks_of) {
    std::vector<int> large;
    for (int i = 0; i + 1 < int(blocks_of.size()); ++i)
      if (blocks_of[i + 1] - blocks_of[i] > cuda_exec::kLargeIslandBlocks) large.push_back(i);
    upload(large, large_islands_);
    num_large_islands_ = int(large.size());
  }

  // `list`: the islands to reduce (host/solve/active_lists.h), or nullptr for all; the large islands'
  // thread blocks check the mask only (there are few of them).
  template <class R, class Op>
  void island_reduce(int num_islands, const int* blocks_of, const int* mask, const R* values, Op op, R identity,
                     R* out, const int* list = nullptr) {
    if (num_islands <= 0) return;
    cuda_exec::island_reduce_kernel<<<warp_grid(num_islands), cuda_exec::kThreads, 0, stream()>>>(
        num_islands, list, blocks_of, mask, values, op, identity, out);
    if (num_large_islands_ > 0)
      cuda_exec::large_island_reduce_kernel<<<num_large_islands_, cuda_exec::kThreads, 0, stream()>>>(
          ptr(large_islands_), blocks_of, mask, values, op, identity, out);
    check("island_reduce launch");
  }

  long long exclusive_scan(const int* in, int n, int* out) {
    if (n <= 0) return 0;
    int last = 0, last_out = 0;
    check(cudaMemcpyAsync(&last, in + n - 1, sizeof(int), cudaMemcpyDeviceToHost, stream()));  // before an in-place scan
    thrust::exclusive_scan(thrust_policy(), in, in + n, out);
    check(cudaMemcpyAsync(&last_out, out + n - 1, sizeof(int), cudaMemcpyDeviceToHost, stream()));
    check(cudaStreamSynchronize(stream()));
    check("exclusive_scan");
    return (long long)last_out + last;
  }

  void stable_sort_by_key(Array<long long>& keys, Array<int>& values) {
    check("before stable_sort_by_key");
    thrust::stable_sort_by_key(thrust_policy(), keys.begin(), keys.end(), values.begin());
    check("stable_sort_by_key");
  }

  template <class R, class F, class Op>
  R reduce(int n, F f, Op op, R identity) {
    if (n <= 0) return identity;
    check("before reduce");
    R r = thrust::transform_reduce(thrust_policy(), thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(n),
                                   f, identity, op);
    check("reduce");
    return r;
  }

  bool any(const Array<int>& flags, int n) { return count(ptr(flags), n) > 0; }

  // How many of flags[0..n) are non-zero: a zeroed device counter, one kernel that adds into it, its
  // copy into pinned host memory and a wait for the stream (the APGD loop's check; Thrust's reductions
  // allocate, launch and copy). Also `any`. The atomics go to device memory: atomics from the device
  // on mapped host memory are not guaranteed atomic where the link to the host has no native atomics
  // (PCIe), and a short count would end an island's APGD loop early or, through ActiveLists, never.
  // The counters are made on first use and shared by copies of the executor.
  std::shared_ptr<int> pinned_count_, device_count_;
  int count(const int* flags, int n) {
    if (n <= 0) return 0;
    if (!pinned_count_) {
      void* p = nullptr;
      check(cudaHostAlloc(&p, sizeof(int), cudaHostAllocDefault));
      pinned_count_.reset(static_cast<int*>(p), [](int* q) { cudaFreeHost(q); });
      void* d = nullptr;
      check(cudaMalloc(&d, sizeof(int)));
      device_count_.reset(static_cast<int*>(d), [](int* q) { cudaFree(q); });
    }
    int* host = pinned_count_.get();
    int* device = device_count_.get();
    check(cudaMemsetAsync(device, 0, sizeof(int), stream()));
    cuda_exec::count_kernel<<<(n + cuda_exec::kThreads - 1) / cuda_exec::kThreads, cuda_exec::kThreads, 0, stream()>>>(
        n, flags, device);
    check("count launch");
    check(cudaMemcpyAsync(host, device, sizeof(int), cudaMemcpyDeviceToHost, stream()));
    check(cudaStreamSynchronize(stream()));
    return *host;
  }

  // body() `times` times: the APGD iterations between two checks, whose launches have the same
  // arguments every time (the state they change lives on the device). With graphs on, after one
  // plain call the launches are captured into a CUDA graph that is launched for the rest: one
  // launch instead of four or five per iteration. The executable graph is kept and updated in place
  // (cudaGraphExecUpdate) while the captured launches keep their shape, instantiated again otherwise.
  std::shared_ptr<std::remove_pointer_t<cudaGraphExec_t>> graph_exec_;
  template <class Body>
  void repeat(int times, Body&& body, long long /*work*/ = -1) {
    if (!use_graphs || times <= 1) {
      for (int t = 0; t < times; ++t) body();
      return;
    }
    // The first time plainly: whatever a launch sets up on first use (a cuBLAS handle, a buffer)
    // must not happen inside a capture.
    body();
    --times;
    cudaGraph_t graph = nullptr;
    check("before a graph capture");
    check(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
    capturing_ = true;
    try {
      body();
    } catch (...) {
      capturing_ = false;
      cudaStreamEndCapture(stream(), &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    capturing_ = false;
    check(cudaStreamEndCapture(stream(), &graph));
    std::shared_ptr<std::remove_pointer_t<cudaGraph_t>> captured(graph, [](cudaGraph_t g) { cudaGraphDestroy(g); });
    bool updated = false;
    if (graph_exec_) {
      cudaGraphExecUpdateResultInfo info;
      updated = cudaGraphExecUpdate(graph_exec_.get(), graph, &info) == cudaSuccess;
      if (!updated) cudaGetLastError();  // an update that does not fit is not an error: instantiate anew
    }
    if (!updated) {
      cudaGraphExec_t instance = nullptr;
      check(cudaGraphInstantiate(&instance, graph, 0));
      graph_exec_.reset(instance, [](cudaGraphExec_t e) { cudaGraphExecDestroy(e); });
    }
    for (int t = 0; t < times; ++t) check(cudaGraphLaunch(graph_exec_.get(), stream()));
    check("graph launch");
  }
};
static_assert(check_executor<CudaExec>());

}  // namespace stagger
