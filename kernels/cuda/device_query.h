// CUDA device discovery, callable from host code compiled by g++.
#pragma once

#include <string>

namespace stagger {

// Number of usable CUDA devices; 0 when there is no driver or no device (then *why says what
// the runtime answered, if why is given).
int cuda_device_count(std::string* why = nullptr);

// Bytes in use on the current device (by every process), or -1 when it cannot be asked.
long long cuda_device_memory_used();

// Device memory bandwidth in GB/s measured by a device-to-device copy of `bytes` (read and write
// counted), the best of a few; -1 when it cannot be measured.
double cuda_copy_bandwidth(long long bytes);

}  // namespace stagger
