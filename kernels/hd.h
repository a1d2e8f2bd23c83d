// STAGGER_HD marks the element functions that both the CPU backends and the CUDA kernels call.
// Under nvcc they become __host__ __device__; under g++ the macro is empty, so this directory stays
// plain C++ that CI (no GPU) compiles and tests.
#pragma once

#if defined(__CUDACC__)
#define STAGGER_HD __host__ __device__
#define STAGGER_INLINE __forceinline__
#elif defined(__GNUC__)
#define STAGGER_HD
// Element functions are small and called in the innermost loops: inline them like a kernel would.
#define STAGGER_INLINE inline __attribute__((always_inline))
#else
#define STAGGER_HD
#define STAGGER_INLINE inline
#endif

namespace stagger {

template <class T> STAGGER_HD STAGGER_INLINE T min_of(T a, T b) { return a < b ? a : b; }
template <class T> STAGGER_HD STAGGER_INLINE T max_of(T a, T b) { return a > b ? a : b; }
template <class T> STAGGER_HD STAGGER_INLINE T clamp_to(T x, T lo, T hi) { return min_of(max_of(x, lo), hi); }
template <class T> STAGGER_HD STAGGER_INLINE T abs_of(T x) { return x < T(0) ? -x : x; }
template <class T> STAGGER_HD STAGGER_INLINE T square(T x) { return x * x; }

}  // namespace stagger
