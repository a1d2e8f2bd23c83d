// The unit of work of the batched solve stage, shared by its executors.
#pragma once

namespace stagger {

// A run of at most Exec::block_size() contacts of one island: the unit of parallel work and of the
// partial sums behind every per-island reduction, so results do not depend on the thread count.
// The CPU runs a block's 32 contacts in order on one thread; the GPU runs a block of 32 as one
// warp, so that the many small islands of a pile do not leave whole thread blocks idle.
struct ContactBlock {
  int island, begin, end;
};

// The executors' shapes: contacts per block, and APGD iterations between checks of "is any island
// still iterating" (free on the CPU, a round trip to the host on the GPU). The CPU executor can run
// with the GPU's (SolveControls::block_size, loop_check_interval), so that CI runs the GPU's block
// partition and loop control; docs/backends.md lists where the executors differ.
// 32 on the CPU, as on the GPU: an island of about a thousand contacts is some 30 blocks, and the
// two threads of the demo bed's APGD team run 52% and 48% of its contacts (counted over 3,000
// steps), against 54% and 46% with blocks of 64 (with 256, 4 or 5 blocks were split 3 to 2).
// Measured on the 2-core VM (2026-11-28, 2 threads, alternated; docs/benchmarks.md): the demo bed's
// 3,000 steps 1.54-1.55 s against 1.56-1.62 s at 64 (16: 1.54-1.57 s), its 4,000 in 2.05 s against
// 2.08-2.13 s, the pours, the resting 10k bed and the box stacks the same within 2%, one thread the
// same, the same states (the hashes of all five). 64 had been 5% faster than 256 on the demo.
constexpr int kCpuBlockSize = 32, kCpuLoopCheckInterval = 1;
// The CPU runs the iterations of an APGD loop over at least this many contacts as one OpenMP team
// (host/step/parallel.h, run_as_team; docs/benchmarks.md says how it was chosen), and a team takes one
// thread per this many contacts (at least two; host/step/exec_cpu.h, team_threads): the same crossing
// point, a thread's share being worth its barrier from about 512 contacts.
constexpr int kCpuTeamMinContacts = 512;
constexpr int kGpuBlockSize = 32, kGpuLoopCheckInterval = 8;

}  // namespace stagger
