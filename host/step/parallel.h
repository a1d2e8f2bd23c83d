// The batched CPU backend's "kernel launch": an OpenMP loop over elements with static scheduling.
// Static scheduling keeps each element on a fixed thread for a given thread count, and no loop body
// writes anything another element reads, so results do not depend on the thread count.
#pragma once

#include <exception>

namespace stagger {

// Below this many elements a parallel region costs more than it saves. Measured on the 2-core EPYC VM
// (2 threads, 3,000 steps, runs alternated twice): the 325-bead shaken bed (1,000-1,300 contacts, one
// island of ~900) ran 620-690 steps/s at 512, 640-750 at 1,024, 780-870 at 2,048 and 720-830 at 4,096
// (one thread: 800-815); the 1k pour (2,700 contacts, 600 steps) the same at 512 and 2,048 and 1.3x
// slower at 4,096. (An earlier measurement on another VM had favoured 512: the crossing point is the
// machine's, near a few thousand contacts on two cores.)
constexpr int kParallelThreshold = 2048;

// `work` is how many elements the loop touches in all (for loops over blocks of elements).
// An exception thrown by a body (e.g. std::bad_alloc) must not escape an OpenMP region (that
// terminates the program): the first one is kept and rethrown after the loop.
template <class F>
void parallel_for(int n, F&& body, long long work = -1) {
  if ((work < 0 ? n : work) < kParallelThreshold) {
    for (int i = 0; i < n; ++i) body(i);
    return;
  }
  std::exception_ptr error;
#pragma omp parallel for schedule(static)
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

}  // namespace stagger
