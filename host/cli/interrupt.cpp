#include "cli/interrupt.h"

#include <csignal>

namespace stagger {

namespace {

volatile std::sig_atomic_t received = 0;

extern "C" void on_signal(int signal) { received = signal; }

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action{};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // one-shot: the second signal has its default effect
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return received; }

}  // namespace stagger
