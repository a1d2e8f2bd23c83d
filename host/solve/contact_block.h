// The unit of work of the batched solve stage, shared by its executors.
#pragma once

namespace stagger {

// A run of at most Exec::block_size() contacts of one island: the unit of parallel work and of the
// partial sums behind every per-island reduction, so results do not depend on the thread count.
// The CPU runs a block's 64 contacts in order on one thread; the GPU runs a block of 32 as one
// warp, so that the many small islands of a pile do not leave whole thread blocks idle.
struct ContactBlock {
  int island, begin, end;
};

// The executors' shapes: contacts per block, and APGD iterations between checks of "is any island
// still iterating" (free on the CPU, a round trip to the host on the GPU). The CPU executor can run
// with the GPU's (SolveControls::block_size, loop_check_interval), so that CI runs the GPU's block
// partition and loop control; docs/backends.md lists where the executors differ.
// 64 on the CPU: an island of about a thousand contacts is 16 blocks, so that two threads share it
// evenly (with 256 the demo bed's island was 4 or 5 blocks, split 3 to 2). Measured on the 2-core VM
// (2026-11-28, 2 threads, alternated twice): the whole demo in 12.74-12.91 s against 13.44-13.59 s,
// the 1k pour's first 600 steps 2-3% faster, the resting 10k bed and the 4k bed the same within
// 3%, one thread the same; the same states (hashes of the demo, the pours, the resting and 4k beds).
constexpr int kCpuBlockSize = 64, kCpuLoopCheckInterval = 1;
// The CPU runs the iterations of an APGD loop over at least this many contacts as one OpenMP team
// (host/step/parallel.h, run_as_team; docs/benchmarks.md says how it was chosen), and a team takes one
// thread per this many contacts (at least two; host/step/exec_cpu.h, team_threads): the same crossing
// point, a thread's share being worth its barrier from about 512 contacts.
constexpr int kCpuTeamMinContacts = 512;
constexpr int kGpuBlockSize = 32, kGpuLoopCheckInterval = 8;

}  // namespace stagger
