// One inner APGD iteration of the batched solve stage run on a CUDA device with the kernels/
// element functions: x+ = P(y - g/L) with each contact's world impulse (apgd_trial_point), each
// body's velocity from its contacts' impulses (body_velocity_from_impulses), and each contact's
// gradient rows (contact_velocity + contact_rows). Used to check the GPU against the CPU on the same
// inputs and to time the iteration; the CUDA solve backend builds on these launches.
#pragma once

#include <string>
#include <vector>

#include "kernels/problem_view.h"

namespace stagger {

struct IterationState {  // the problem's layout: alpha per contact, beta per contact x friction_dims
  std::vector<double> y_alpha, y_beta, g_alpha, g_beta;
};

struct IterationResult {
  std::vector<double> xp_alpha, xp_beta, g_alpha, g_beta;
  std::vector<Vec3<double>> impulse, v, w;
  double milliseconds = 0;  // median time of one iteration over the timed repeats (device events)
};

// `problem` points at host arrays; they are copied to the device. With repeats > 0 the iteration is
// also run that many more times and timed. Returns false (and why) when no device can run it.
bool cuda_apgd_iteration(const ProblemView<double>& problem, QpPhase phase, double lipschitz, const IterationState& in,
                         int repeats, IterationResult& out, std::string* why);

}  // namespace stagger
