// cuBLAS, opened on first use. Linked in, cuBLAS (through cuBLASLt) runs its static initializers in
// every process that loads stagger: the command line on the CPU, each test, the Python module. That
// cost 0.35 s per process start on the 2-core VM (20x the rest of a short run's start), though only
// the CUDA backend's dense islands call it (exec_cuda.cuh, batched_gemv).
#pragma once

#include <cublas_v2.h>

namespace stagger {

// The functions stagger calls, resolved from the library at first use.
struct CublasApi {
  decltype(&cublasCreate) create;
  decltype(&cublasDestroy) destroy;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasDgemvStridedBatched) dgemv_strided_batched;
  decltype(&cublasSgemvStridedBatched) sgemv_strided_batched;
  decltype(&cublasGetStatusString) status_string;
};

// Opens cuBLAS on the first call (thread-safe); throws std::runtime_error naming the library and the
// loader's reason when it cannot be opened or lacks a function.
const CublasApi& cublas_api();
// Whether cublas_api() has opened the library in this process.
bool cublas_opened();

}  // namespace stagger
