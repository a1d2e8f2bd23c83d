// The progress line of `stagger run` on stderr: a bar on a terminal, a line every 10 s otherwise.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace stagger {

class Progress {
 public:
  Progress(std::int64_t total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}
  void update(std::int64_t step, double t, double steps_per_second, int contacts, bool force = false) {
    if (quiet_) return;
    auto now = Clock::now();
    double since = std::chrono::duration<double>(now - last_).count();
    if (!force && since < (tty_ ? 0.2 : 10.0)) return;
    last_ = now;
    double frac = total_ > 0 ? double(step) / double(total_) : 1.0;
    if (tty_) {
      int filled = int(frac * 30);
      std::fprintf(stderr, "\r[%s%s] %3.0f%% step %lld/%lld  t=%.4g s  %.1f steps/s  %d contacts   ",
                   std::string(filled, '#').c_str(), std::string(30 - filled, '.').c_str(), 100 * frac,
                   (long long)step, (long long)total_, t, steps_per_second, contacts);
    } else {
      std::fprintf(stderr, "step %lld/%lld  t=%.4g s  %.1f steps/s  %d contacts\n", (long long)step,
                   (long long)total_, t, steps_per_second, contacts);
    }
    std::fflush(stderr);
  }
  void finish() {
    if (!quiet_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::int64_t total_;
  bool quiet_, tty_;
  Clock::time_point last_ = Clock::now() - std::chrono::hours(1);
};

}  // namespace stagger
