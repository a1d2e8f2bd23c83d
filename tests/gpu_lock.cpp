#include "gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "step/backend.h"

namespace test {

bool use_the_gpu() {
  if (!stagger::cuda_device_available()) return false;
  static const bool locked = [] {
    // STAGGER_TEST_NO_GPU_LOCK=1: a run that must not wait (the sanitizers beside ctest).
    const char* off = std::getenv("STAGGER_TEST_NO_GPU_LOCK");
    if (off && std::string(off) == "1") return false;
    // Read-only: flock needs no more, and a file another user made is still usable.
    const int fd = ::open("/tmp/stagger_tests_gpu.lock", O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
    return fd >= 0 && ::flock(fd, LOCK_EX) == 0;  // held (fd left open) until the process exits
  }();
  (void)locked;
  return true;
}

}  // namespace test
