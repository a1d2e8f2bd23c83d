// The unit of work of the batched solve stage, shared by its executors.
#pragma once

namespace stagger {

// A run of at most Exec::kBlockSize contacts of one island: the unit of parallel work and of the
// partial sums behind every per-island reduction, so results do not depend on the thread count.
// The CPU runs a block's 256 contacts in order on one thread; the GPU runs a block of 32 as one
// warp, so that the many small islands of a pile do not leave whole thread blocks idle.
struct ContactBlock {
  int island, begin, end;
};

}  // namespace stagger
