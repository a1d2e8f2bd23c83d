#include "gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "step/backend.h"

namespace test {

bool use_the_gpu() {
  if (!stagger::cuda_device_available()) return false;
  static const bool locked = [] {
    const auto path = std::filesystem::temp_directory_path() / "stagger_tests_gpu.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    return fd >= 0 && ::flock(fd, LOCK_EX) == 0;  // held (fd left open) until the process exits
  }();
  (void)locked;
  return true;
}

}  // namespace test
