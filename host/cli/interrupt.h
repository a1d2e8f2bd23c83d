// SIGINT and SIGTERM during a run: the handler only raises a flag; the run checks it after each
// step, writes a checkpoint and its outputs, and exits. A second signal ends the process at once
// (the handlers are one-shot), for a user who does not want to wait for the current step.
#pragma once

namespace stagger {

void install_interrupt_handlers();
// The signal received (SIGINT, SIGTERM), or 0.
int interrupt_signal();

}  // namespace stagger
