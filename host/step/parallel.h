// The batched CPU backend's "kernel launch": an OpenMP loop over elements with static scheduling.
// Static scheduling keeps each element on a fixed thread for a given thread count, and no loop body
// writes anything another element reads, so results do not depend on the thread count.
#pragma once

#include <exception>

namespace stagger {

// Below this many elements a parallel region costs more than it saves. Measured on the 325-bead
// shaken bed (1,000-1,300 contacts in blocks of 256, 2 threads, 4,000 steps, three runs each): 4.3-4.4 s
// at 512 against 4.7-5.1 s at 2,048, where every contact loop of its solve ran on one thread.
constexpr int kParallelThreshold = 512;

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
