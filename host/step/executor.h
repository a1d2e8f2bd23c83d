// What an executor provides: the interface the batched solve (host/solve/staggered_batched.h) is written
// against, checked at compile time for CpuExec (host/step/exec_cpu.h) and CudaExec (host/cuda/exec_cuda.cuh).
// C++17 (nvcc compiles the solve as C++17), so a list of detections rather than a concept:
//
//   template <class T> using Array       arrays of T where the executor's loops can read them
//   static T* ptr(Array<T>&)             their raw pointers, captured by the loop bodies
//   static fill / upload / download      whole-array assignment and host transfers
//   copy_to_host / copy_from_host(from, n, to)   n elements between the arrays' memory and the host's
//   kHostMemory                          whether the arrays are host memory (a double solve then
//                                        reads the host problem in place)
//   block_size(), loop_check_interval()  contacts per ContactBlock; APGD iterations between checks of
//   configure(block, interval)           "any island still iterating?" (host/solve/contact_block.h)
//   for_each(n, f, work)                 f(i) for i < n
//   for_contacts(blocks, nb, mask, nc, f, list)  f(k) for the contacts of masked islands' blocks
//   block_reduce(blocks, nb, mask, nc, f, op, identity, out, list)   per block: op over its f(k)
//   island_reduce(ni, blocks_of, mask, values, op, identity, out, list)   per island: op over its blocks
//   for_contacts_sharing(blocks, nb, mask, nc, shared, f, list), block_reduce_sharing(..., shared, f, op,
//                                        identity, out, list)   the same with f(k, shared(island)): what
//                                        a block's contacts share is read once per block
//                                        (list: the blocks or islands to run, host/solve/active_lists.h;
//                                        nullptr or left out: all of them)
//   plan_islands(blocks_of)              told the island layout once per solve
//   any(flags, n), count(flags, n)       whether any of n flags is set; how many (the APGD loop's check)
//   repeat(times, body, work)            body() `times` times: the APGD iterations between two checks
//                                        (`work`, optional: the contacts they run over; the CPU runs
//                                        them as one OpenMP team from a size on, host/step/parallel.h)
//                                        (the GPU may capture them as a CUDA graph and replay it)
//   exclusive_scan, stable_sort_by_key, reduce, batched_gemv   (collision stages, dense islands)
//
// Where the two differ in meaning (block size, summation order, check interval): docs/backends.md.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "solve/contact_block.h"
#include "kernels/hd.h"

namespace stagger {

// The plain contact loops (for_contacts, block_reduce) as the sharing ones (for_contacts_sharing,
// block_reduce_sharing) with nothing shared: written once for the executors that derive from this
// (Exec: the executor itself).
struct NothingShared {
  STAGGER_HD int operator()(int) const { return 0; }
};
template <class F>
struct IgnoringShared {
  F f;
  STAGGER_HD auto operator()(int k, int) const { return f(k); }
};
template <class Exec>
struct PlainContactLoops {
  template <class F>
  void for_contacts(const ContactBlock* blocks, int num_blocks, const int* mask, int num_contacts, F f,
                    const int* list = nullptr) {
    static_cast<Exec&>(*this).for_contacts_sharing(blocks, num_blocks, mask, num_contacts, NothingShared{},
                                                   IgnoringShared<F>{f}, list);
  }
  template <class R, class F, class Op>
  void block_reduce(const ContactBlock* blocks, int num_blocks, const int* mask, int num_contacts, F f, Op op,
                    R identity, R* out, const int* list = nullptr) {
    static_cast<Exec&>(*this).block_reduce_sharing(blocks, num_blocks, mask, num_contacts, NothingShared{},
                                                   IgnoringShared<F>{f}, op, identity, out, list);
  }
};

namespace executor_check {

struct Body {
  STAGGER_HD void operator()(int) const {}
};
struct Value {
  STAGGER_HD double operator()(int) const { return 0; }
};
struct Shared {
  STAGGER_HD int operator()(int) const { return 0; }
};
struct SharedBody {
  STAGGER_HD void operator()(int, int) const {}
};
struct SharedValue {
  STAGGER_HD double operator()(int, int) const { return 0; }
};
struct Sum {
  STAGGER_HD double operator()(double a, double b) const { return a + b; }
};

template <class E>
using Arrays = decltype(E::ptr(std::declval<typename E::template Array<double>&>()),
                        E::fill(std::declval<typename E::template Array<int>&>(), std::size_t(0), 0),
                        E::upload(std::declval<const std::vector<int>&>(), std::declval<typename E::template Array<int>&>()),
                        E::download(std::declval<const typename E::template Array<int>&>(), std::declval<std::vector<int>&>()),
                        bool(E::kHostMemory));
template <class E>
using Shape = decltype(int(std::declval<E&>().block_size()), int(std::declval<E&>().loop_check_interval()),
                       std::declval<E&>().configure(0, 0));
template <class E>
using Loops = decltype(std::declval<E&>().for_each(0, Body{}, 0LL),
                       std::declval<E&>().for_contacts((const ContactBlock*)nullptr, 0, (const int*)nullptr, 0, Body{}),
                       std::declval<E&>().block_reduce((const ContactBlock*)nullptr, 0, (const int*)nullptr, 0, Value{},
                                                       Sum{}, 0.0, (double*)nullptr),
                       std::declval<E&>().island_reduce(0, (const int*)nullptr, (const int*)nullptr,
                                                        (const double*)nullptr, Sum{}, 0.0, (double*)nullptr),
                       std::declval<E&>().for_contacts((const ContactBlock*)nullptr, 0, (const int*)nullptr, 0, Body{},
                                                       (const int*)nullptr),
                       std::declval<E&>().block_reduce((const ContactBlock*)nullptr, 0, (const int*)nullptr, 0, Value{},
                                                       Sum{}, 0.0, (double*)nullptr, (const int*)nullptr),
                       std::declval<E&>().island_reduce(0, (const int*)nullptr, (const int*)nullptr,
                                                        (const double*)nullptr, Sum{}, 0.0, (double*)nullptr,
                                                        (const int*)nullptr),
                       std::declval<E&>().for_contacts_sharing((const ContactBlock*)nullptr, 0, (const int*)nullptr, 0,
                                                               Shared{}, SharedBody{}, (const int*)nullptr),
                       std::declval<E&>().block_reduce_sharing((const ContactBlock*)nullptr, 0, (const int*)nullptr, 0,
                                                               Shared{}, SharedValue{}, Sum{}, 0.0, (double*)nullptr,
                                                               (const int*)nullptr),
                       std::declval<E&>().plan_islands(std::declval<const std::vector<int>&>()));
struct Repeated {
  void operator()() const {}
};

template <class E>
using Queries = decltype(bool(std::declval<E&>().any(std::declval<const typename E::template Array<int>&>(), 0)),
                         int(std::declval<E&>().count((const int*)nullptr, 0)),
                         std::declval<E&>().repeat(1, Repeated{}),
                         (long long)(std::declval<E&>().exclusive_scan((const int*)nullptr, 0, (int*)nullptr)),
                         std::declval<E&>().stable_sort_by_key(std::declval<typename E::template Array<long long>&>(),
                                                               std::declval<typename E::template Array<int>&>()),
                         double(std::declval<E&>().reduce(0, Value{}, Sum{}, 0.0)),
                         std::declval<E&>().batched_gemv(0, 0, (const double*)nullptr, (const double*)nullptr,
                                                         (double*)nullptr, (const int*)nullptr, (const int*)nullptr));

template <class E, template <class> class Part, class = void>
struct Has : std::false_type {};
template <class E, template <class> class Part>
struct Has<E, Part, std::void_t<Part<E>>> : std::true_type {};

}  // namespace executor_check

// Fails to compile, naming the missing part, when `Exec` lacks part of the interface above.
template <class Exec>
constexpr bool check_executor() {
  static_assert(executor_check::Has<Exec, executor_check::Arrays>::value,
                "an executor provides Array<T>, ptr, fill, upload, download and kHostMemory");
  static_assert(executor_check::Has<Exec, executor_check::Shape>::value,
                "an executor provides block_size(), loop_check_interval() and configure(block, interval)");
  static_assert(executor_check::Has<Exec, executor_check::Loops>::value,
                "an executor provides for_each, for_contacts, block_reduce, island_reduce (each also over a list), "
                "for_contacts_sharing, block_reduce_sharing and plan_islands");
  static_assert(executor_check::Has<Exec, executor_check::Queries>::value,
                "an executor provides any, count, repeat, exclusive_scan, stable_sort_by_key, reduce and batched_gemv");
  return true;
}

}  // namespace stagger
