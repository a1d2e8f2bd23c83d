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

// Below this many elements a parallel region costs more than it saves. Since the APGD iterations of
// an island of 512 contacts or more run as one team (run_as_team, below), this threshold only decides
// the loops outside them: collision, islands, the problem's assembly, the QPs' start and end passes,
// the error evaluations, the quality measures. Measured on the 2-core EPYC VM (2026-11-28, 2 threads,
// the 325-bead shaken bed's first 3,000 steps, one island of about 1,000 contacts, runs alternated
// three times): 1,640-1,670 steps/s at 2,048, 1,810-1,820 at 1,024, 1,890-1,900 at 768 and
// 1,820-1,920 at 512; the other scenes: bench/results/epyc-2core_cpu/ab_2445e80_vs_threshold768.csv.
// (Before the team, when every APGD loop opened a region of its own, 2,048 was the best: 512 ran the
// bed at 620-690 steps/s against 780-870.)
constexpr int kParallelThreshold = 768;

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
// Elements per thread of a parallel loop (threads_for): a thread's share worth its barrier on a
// many-core host, measured before the threshold above was lowered and kept apart from it.
constexpr int kElementsPerThread = 1024;

// Elements per chunk of a loop whose chunks' outputs are concatenated in order, so that the output
// does not depend on the chunking: `most` on large inputs, fewer on small ones, so that two threads
// share even a small scene evenly (the 330-body demo bed's grid search was 3 chunks of 128 bodies,
// split 2 to 1: 16 chunks took its broad phase from 0.058 to 0.048 ms a step on two threads; its
// narrow phase, 3 chunks of 512 pairs, was no faster in 11 or 16, so it keeps its 512).
inline int chunk_size(int n, int most, int least = 16) { return std::clamp(n / 16, std::min(least, most), most); }

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
  if ((work < 0 ? n : work) < kParallelThreshold || omp_get_max_threads() <= 1) {
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
