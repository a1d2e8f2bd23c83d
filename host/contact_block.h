// The unit of work of the batched solve stage, shared by its executors.
#pragma once

namespace stagger {

// A run of at most kSolveBlockSize contacts of one island: the unit of parallel work and of the
// partial sums behind every per-island reduction, so results do not depend on the thread count.
// The CPU runs a block's contacts in order on one thread; the GPU runs a block as one thread block.
struct ContactBlock {
  int island, begin, end;
};
constexpr int kSolveBlockSize = 256;

}  // namespace stagger
