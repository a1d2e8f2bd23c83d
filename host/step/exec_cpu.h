// The batched CPU backend's executor: how the generic batched solve (host/solve/staggered_batched.h)
// stores its arrays and launches its element loops on the host. The CUDA executor
// (host/cuda/exec_cuda.cuh) offers the same members with device arrays and kernels, so the CPU runs
// the GPU's algorithm: the same loops and the same element functions; only the block size (64
// contacts here by default, a warp of 32 there) and so the summation order of the reductions, and how
// often the iteration loop asks whether any island is still iterating, differ. Both can be set to the
// GPU's (configure).
#pragma once

#include <algorithm>
#include <vector>

#include <omp.h>

#include "solve/contact_block.h"
#include "solve/contact_problem.h"
#include "step/executor.h"
#include "step/parallel.h"

namespace stagger {

// The element loops inline everything their body calls: g++ judged the APGD gradient's loop body too
// large and called it once per contact, and 8% of the demo bed's single-thread samples then sat on
// that call's return, adding up its four sums through the stack. Flattened, the bed's APGD core took
// 3-7% less time in three alternated pairs (the same states: this changes no arithmetic).
#if defined(__GNUC__) && !defined(__CUDACC__)
#define STAGGER_FLATTEN __attribute__((flatten))
#else
#define STAGGER_FLATTEN
#endif

struct CpuExec : PlainContactLoops<CpuExec> {
  template <class T>
  using Array = std::vector<T>;
  static constexpr bool kHostMemory = true;  // a double solve reads the host problem in place
  // Contacts per block: large enough to amortize a loop, small enough to spread one island over
  // threads; and how many APGD iterations run between checks of "is any island still iterating"
  // (a check is free here). Set by configure.
  int block_size_ = kCpuBlockSize, loop_check_interval_ = kCpuLoopCheckInterval;
  // The iterations of an APGD loop over at least this many contacts run as one OpenMP team
  // (run_as_team, host/step/parallel.h). Set by configure.
  long long team_min_contacts_ = kCpuTeamMinContacts;
  long long teams_ = 0;  // how many repeat() calls ran as a team (for tests)
  int block_size() const { return block_size_; }
  int loop_check_interval() const { return loop_check_interval_; }
  // The shape a solve asks for (SolveControls): 0 keeps the CPU's own (a team: -1).
  void configure(int block_size, int loop_check_interval, int team_min_contacts = -1) {
    block_size_ = block_size > 0 ? block_size : kCpuBlockSize;
    loop_check_interval_ = loop_check_interval > 0 ? loop_check_interval : kCpuLoopCheckInterval;
    team_min_contacts_ = team_min_contacts >= 0 ? team_min_contacts : kCpuTeamMinContacts;
  }
  // Stalled islands may race the outer loop with Gauss-Seidel sweeps (the polish,
  // host/solve/staggered_batched.h): one thread sweeps an island, against an APGD iteration that a team
  // of `threads()` runs on islands of at least team_min_contacts_ contacts.
  static constexpr bool kPolish = true;
  int threads() const { return omp_get_max_threads(); }
  // The threads of the team that runs an APGD loop over `contacts` contacts (repeat): one per
  // kCpuTeamMinContacts, at least two (threads_for, host/step/parallel.h).
  int team_threads(long long contacts) const { return threads_for(contacts, kCpuTeamMinContacts); }
  // Islands of at most this many contacts take the dense path (host/solve/dense_islands.h): none, because
  // on the CPU the matrix-free product was faster at every island size measured (docs/backends.md).
  static constexpr int kDenseMaxContacts = 0;

  template <class T>
  static T* ptr(Array<T>& a) { return a.data(); }
  template <class T>
  static const T* ptr(const Array<T>& a) { return a.data(); }
  template <class T>
  static void fill(Array<T>& a, std::size_t n, const T& value) { a.assign(n, value); }
  template <class T>
  static void upload(const std::vector<T>& host, Array<T>& a) { a = host; }
  template <class T>
  static void download(const Array<T>& a, std::vector<T>& host) { host = a; }
  // n elements from the executor's memory to the host's and back (the exact solve's staging; here a copy).
  template <class T>
  void copy_to_host(const T* from, std::size_t n, T* to) { std::copy_n(from, n, to); }
  template <class T>
  void copy_from_host(const T* from, std::size_t n, T* to) { std::copy_n(from, n, to); }

  // f(i) for i in [0, n); `work`: how many elements the n calls touch in all, when more than n
  // (a body's call reads all its contacts).
  template <class F>
  void for_each(int n, F f, long long work = -1) { parallel_for(n, f, work); }

  // for_contacts (PlainContactLoops): f(k) for every contact k of the blocks whose island has
  // mask[island] != 0: of blocks 0..num_blocks, or of the blocks list[0..num_blocks) when a list is
  // given (the islands still iterating, host/solve/active_lists.h). block_reduce: out[b] =
  // op-reduction of f(k) over the contacts of block b, for the blocks of masked islands (in contact
  // order from `identity`; the GPU reduces the same block as a tree); b as above.
  // Both run as the two below with f(k, shared(i)), i the block's island: what the contacts of an
  // island share (its step's scalars, its buffers in their roles) is read once per block. The
  // compiler cannot hoist it out of the loop itself, since the loop's stores might alias it.
  template <class S, class F>
  void for_contacts_sharing(const ContactBlock* blocks, int num_blocks, const int* mask, int num_contacts, S shared,
                            F f, const int* list = nullptr) {
    parallel_for(
        num_blocks,
        [&](int j) STAGGER_FLATTEN {
          const ContactBlock blk = blocks[list ? list[j] : j];
          if (!mask[blk.island]) return;
          const auto s = shared(blk.island);
          for (int k = blk.begin; k < blk.end; ++k) f(k, s);
        },
        num_contacts);
  }
  template <class S, class R, class F, class Op>
  void block_reduce_sharing(const ContactBlock* blocks, int num_blocks, const int* mask, int num_contacts, S shared,
                            F f, Op op, R identity, R* out, const int* list = nullptr) {
    parallel_for(
        num_blocks,
        [&](int j) STAGGER_FLATTEN {
          const int b = list ? list[j] : j;
          const ContactBlock blk = blocks[b];
          if (!mask[blk.island]) return;
          const auto s = shared(blk.island);
          R sum = identity;
          for (int k = blk.begin; k < blk.end; ++k) sum = op(sum, f(k, s));
          out[b] = sum;
        },
        num_contacts);
  }

  // Dense islands (host/solve/dense_islands.h): y_b = A_b x_b for b in [0, count), A_b column-major
  // rows x rows at stride rows^2, x_b and y_b at stride rows; items whose island is not masked are
  // skipped (the GPU's cuBLAS batch computes them all, which changes nothing: their x is unchanged).
  // Small islands mean large counts, so the items are spread over threads by their work.
  template <class T>
  void batched_gemv(int rows, int count, const T* a, const T* x, T* y, const int* item_island, const int* mask) {
    parallel_for(
        count,
        [&](int b) {
          if (!mask[item_island[b]]) return;
          const T* m = a + (long long)b * rows * rows;
          const T* xb = x + (long long)b * rows;
          T* yb = y + (long long)b * rows;
          for (int r = 0; r < rows; ++r) yb[r] = T(0);
          for (int c = 0; c < rows; ++c) {
            const T xc = xb[c];
            const T* column = m + (long long)c * rows;
            for (int r = 0; r < rows; ++r) yb[r] += column[r] * xc;
          }
        },
        (long long)count * rows * rows);
  }

  // Told the blocks of every island once per solve (the GPU picks its reduction shape from it).
  void plan_islands(const std::vector<int>&) {}

  // out[i] = op-reduction of values[b] over island i's blocks [blocks_of[i], blocks_of[i + 1]), for
  // masked islands (in block order from `identity`; the GPU reduces them with one warp per island):
  // islands 0..num_islands, or list[0..num_islands) when a list is given.
  template <class R, class Op>
  void island_reduce(int num_islands, const int* blocks_of, const int* mask, const R* values, Op op, R identity,
                     R* out, const int* list = nullptr) {
    parallel_for(num_islands, [&](int j) {
      const int i = list ? list[j] : j;
      if (!mask[i]) return;
      R sum = identity;
      for (int b = blocks_of[i]; b < blocks_of[i + 1]; ++b) sum = op(sum, values[b]);
      out[i] = sum;
    });
  }

  // out[i] = sum of in[0..i) (in and out may be the same array); returns the total.
  long long exclusive_scan(const int* in, int n, int* out) {
    long long sum = 0;
    for (int i = 0; i < n; ++i) {
      const int v = in[i];
      out[i] = int(sum);
      sum += v;
    }
    return sum;
  }

  // Orders values by keys, keeping the order of equal keys.
  void stable_sort_by_key(Array<long long>& keys, Array<int>& values) {
    std::vector<int> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] < keys[b]; });
    Array<long long> k(keys.size());
    Array<int> v(values.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      k[i] = keys[order[i]];
      v[i] = values[order[i]];
    }
    keys.swap(k);
    values.swap(v);
  }

  // op-reduction of f(i) over [0, n) from identity.
  template <class R, class F, class Op>
  R reduce(int n, F f, Op op, R identity) {
    R r = identity;
    for (int i = 0; i < n; ++i) r = op(r, f(i));
    return r;
  }

  bool any(const Array<int>& flags, int n) { return std::any_of(flags.begin(), flags.begin() + n, [](int f) { return f != 0; }); }
  // How many of flags[0..n) are non-zero.
  int count(const int* flags, int n) {
    int c = 0;
    for (int i = 0; i < n; ++i) c += flags[i] != 0;
    return c;
  }
  // body() `times` times (the APGD iterations between two checks; the GPU may replay them as a graph,
  // so body's launches must not depend on host state that changes between the calls). `work`: the
  // contacts the iterations run over; from team_min_contacts_ on, with more than one thread, they
  // run as one team (the same results).
  template <class Body>
  void repeat(int times, Body&& body, long long work = -1) {
    if (work >= team_min_contacts_ && !in_team() && omp_get_max_threads() > 1) {
      ++teams_;
      run_as_team([&] {
        for (int t = 0; t < times; ++t) body();
      }, team_threads(work));
      return;
    }
    for (int t = 0; t < times; ++t) body();
  }
};
static_assert(check_executor<CpuExec>());

}  // namespace stagger
