// The batched CPU backend's "kernel launch": an OpenMP loop over elements with static scheduling.
// Static scheduling keeps each element on a fixed thread for a given thread count, and no loop body
// writes anything another element reads, so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <exception>

#include <omp.h>

namespace stagger {

namespace detail {
// Set on each thread of a run_as_team region: where the team keeps the first exception a loop body
// threw. Null outside a team.
inline thread_local std::exception_ptr* team_error = nullptr;
}  // namespace detail

// Below this many elements a parallel region costs more than it saves. Measured on the 2-core EPYC VM
// (2 threads, 3,000 steps, runs alternated twice): the 325-bead shaken bed (1,000-1,300 contacts, one
// island of ~900) ran 620-690 steps/s at 512, 640-750 at 1,024, 780-870 at 2,048 and 720-830 at 4,096
// (one thread: 800-815); the 1k pour (2,700 contacts, 600 steps) the same at 512 and 2,048 and 1.3x
// slower at 4,096. (An earlier measurement on another VM had favoured 512: the crossing point is the
// machine's, near a few thousand contacts on two cores.)
constexpr int kParallelThreshold = 2048;

// How many threads a parallel loop over `work` elements uses: one per `per_thread` elements, at
// least two, at most the machine's. Why not all of them: a region or barrier costs more the more
// threads it waits for, and on a 16-core Xeon host the batched backend ran the 330-body shaken bed
// (one island of about 1,000 contacts) at 650 steps/s and the 1k pour at 347 on all 16 threads
// (bench/results/h200_cuda), against about 1,550-1,590 and 660-670 on two threads of this 2-core VM
// (bench/results/epyc-2core_cpu/broadphase_stages.csv, a later commit; docs/backends.md). Results do not
// depend on the thread count (static schedules, fixed summation orders), so neither does this.
inline int threads_for(long long work, long long per_thread) {
  const int most = omp_get_max_threads();
  if (most <= 1) return 1;
  return int(std::clamp<long long>(work / std::max<long long>(per_thread, 1), 2, most));
}
constexpr int kElementsPerThread = kParallelThreshold / 2;

// `work` is how many elements the loop touches in all (for loops over blocks of elements).
// An exception thrown by a body (e.g. std::bad_alloc) must not escape an OpenMP region (that
// terminates the program): the first one is kept and rethrown after the loop.
template <class F>
void parallel_for(int n, F&& body, long long work = -1) {
  if (detail::team_error) {  // inside run_as_team: every thread of the team reaches this loop
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) {
      try {
        body(i);
      } catch (...) {
#pragma omp critical(stagger_parallel_error)
        if (!*detail::team_error) *detail::team_error = std::current_exception();
      }
    }
    return;  // the end of `omp for` is a barrier: the next loop sees every element written
  }
  if ((work < 0 ? n : work) < kParallelThreshold) {
    for (int i = 0; i < n; ++i) body(i);
    return;
  }
  std::exception_ptr error;
  const int threads = threads_for(work < 0 ? n : work, kElementsPerThread);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int i = 0; i < n; ++i) {
    try {
      body(i);
    } catch (...) {
#pragma omp critical(stagger_parallel_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// body() on every thread of one OpenMP team of `threads` threads, whose parallel_for loops then share out their
// elements (static schedule, a barrier at the end of each) instead of each opening and closing a
// parallel region of its own, whatever their size. Why: on the 2-core VM a region costs about
// 1.7 us and a barrier 0.6 us, and one APGD iteration is five loops: with a region per loop the
// demo bed's ~1,000 contacts were faster on one thread, with one team per iteration they gain
// from the second (docs/benchmarks.md). body() must run the same loops on every thread and write
// shared state only inside them; a static schedule keeps each element on a fixed thread, and no
// result depends on which thread ran an element, so results are the same bit for bit.
template <class F>
void run_as_team(F&& body, int threads) {
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    detail::team_error = &error;
    body();
    detail::team_error = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

inline bool in_team() { return detail::team_error != nullptr; }

}  // namespace stagger
