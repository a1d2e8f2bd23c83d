// Which compute backends this build and this machine offer.
#pragma once

#include <string>

namespace stagger {

// True when the build has CUDA and a device answers.
bool cuda_device_available();
// Why `--backend cuda` cannot run here, in words for an error message.
std::string cuda_unavailable_reason();
// Bytes in use on the CUDA device (all processes), or -1 without one: benchmarks take differences.
long long cuda_memory_used();

}  // namespace stagger
