// One GPU shared by the test processes that ctest runs side by side. Without MPS the GPU time-slices
// concurrent CUDA contexts, and the solver's short kernels, with a host read every few iterations,
// then wait out the other processes' slices: on an H100 a test that takes 4 s alone took 64 s beside
// three others, and 8-second ones ran past 160 s. A test process about to use the GPU takes this
// lock and keeps it until it exits, so the GPU tests run one at a time and the CPU tests beside them.
// STAGGER_TEST_NO_GPU_LOCK=1 turns it off (bench/gpu_session.sh's sanitizer runs beside ctest).
// (Declared outside namespace stagger: the CLI tests call their helper test::stagger unqualified.)
#pragma once

namespace test {

// True when the CUDA backend can run here, after taking the tests' GPU lock (once per process).
bool use_the_gpu();

}  // namespace test
