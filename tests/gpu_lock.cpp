#include "gpu_lock.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "step/backend.h"

namespace test {

namespace {
constexpr const char* kLockFile = "/tmp/stagger_tests_gpu.lock";

// Whether another process could take the lock now (a child tries without waiting).
bool lock_is_free() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(kLockFile, O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
    ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
}  // namespace

bool use_the_gpu() {
  if (!stagger::cuda_device_available()) return false;
  static const bool locked = [] {
    // STAGGER_TEST_NO_GPU_LOCK=1: a run that must not wait (the sanitizers beside ctest).
    const char* off = std::getenv("STAGGER_TEST_NO_GPU_LOCK");
    if (off && std::string(off) == "1") return false;
    // Read-only: flock needs no more, and a file another user made is still usable.
    const int fd = ::open(kLockFile, O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
    return fd >= 0 && ::flock(fd, LOCK_EX) == 0;  // held (fd left open) until the process exits
  }();
  (void)locked;
  return true;
}

}  // namespace test

// The lock's own test: a process that uses the GPU holds it until it exits; without a GPU none is
// taken, so the CPU tests never wait for one another.
TEST_CASE("a test process that uses the GPU holds the tests' GPU lock, and one without a GPU takes none", "[tests]") {
  const char* off = std::getenv("STAGGER_TEST_NO_GPU_LOCK");
  const bool lock_off = off && std::string(off) == "1";
  const bool gpu = test::use_the_gpu();
  CHECK(test::lock_is_free() == (!gpu || lock_off));
}
