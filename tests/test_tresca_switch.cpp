// The Tresca switch (SolveControls::tresca_switch_window; docs/method.md, "A stalled structure goes on
// by the Tresca fixed point"): under "auto", a structure whose staggered outer loop stalls goes on by the
// Tresca fixed point from its best pair. Checked where it matters most, on the GPU's path: the CUDA
// backend where there is a GPU (the "[CUDA backend]" copy), and its CPU twin in the GPU's shape (no exact
// solve, no polish, 32-contact blocks): ten boxes stacked on a 3 degree slope, friction 0.5 against
// tan 3 deg = 0.05, must stand still, every step converged.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

namespace {

struct StackRun {
  int unconverged = 0;
  long long outer = 0;
  double drift = 0;  // the largest displacement of a box from its place after the first step
};

StackRun run_tilted_stack(SolverBackend backend, int switch_window, Method method, int steps, bool exact = false) {
  Scene scene = validation_scene("box_stack");
  const double g = norm(scene.gravity), tilt = 3 * M_PI / 180;
  scene.gravity = {g * std::sin(tilt), 0, -g * std::cos(tilt)};
  scene.solver.method = method;
  WorldOptions options = on_backend(backend);
  options.controls.exact_small_islands = exact;  // false: as the CUDA executor runs by default
  options.controls.exact_on_device = exact;
  options.controls.polish = false;
  options.controls.block_size = 32;
  options.controls.loop_check_interval = 8;
  options.controls.tresca_switch_window = switch_window;
  World world(scene, options);
  world.step();
  const std::vector<Vec3d> first = world.bodies().x;
  StackRun run;
  for (int s = 1; s < steps; ++s) {
    world.step();
    run.unconverged += world.last_step().converged ? 0 : 1;
    run.outer += world.last_step().outer_iterations;
  }
  for (int i = 0; i < world.bodies().size(); ++i)
    if (world.bodies().is_dynamic(i)) run.drift = std::max(run.drift, norm(world.bodies().x[i] - first[i]));
  return run;
}

}  // namespace

TEST_CASE("a stalled stack on a slope goes on by the Tresca fixed point and stands, with no exact solve", "[tresca_switch][world][backends]") {
  if (skip_backend_run()) return;
  auto backend = GENERATE(from_range(batched_backends()));
  CAPTURE(backend_name(backend));
  const int steps = 400;
  const StackRun off = run_tilted_stack(backend, 0, Method::automatic, steps);
  const StackRun on = run_tilted_stack(backend, SolveControls{}.tresca_switch_window, Method::automatic, steps);
  CAPTURE(off.unconverged, off.drift, off.outer, on.unconverged, on.drift, on.outer);
  // Without the switch the staggered loop cycles above the tolerance on most steps, and the stack creeps
  // down the slope on the friction it leaves unsettled.
  CHECK(off.unconverged > steps / 2);
  CHECK(off.drift > 2e-5);  // 67 um in these 400 steps (1.6 mm in 2 s)
  // With it every step converges, the boxes stay within a micrometre, in fewer outer iterations.
  CHECK(on.unconverged == 0);
  CHECK(on.drift < 1e-6);
  CHECK(on.outer < off.outer);
}

TEST_CASE("a method the scene names is kept: no Tresca switch for \"staggered\"", "[tresca_switch][world]") {
  // The switch is part of "auto"'s choice; a scene that names Staggered Projections gets them.
  const StackRun named = run_tilted_stack(SolverBackend::batched, SolveControls{}.tresca_switch_window, Method::staggered, 100);
  CAPTURE(named.unconverged);
  CHECK(named.unconverged > 20);
}

TEST_CASE("the exact solve on the GPU's path (exact_on_device) takes the stalled stack, and it stands", "[tresca_switch][exact_ccp][world][backends]") {
  // SolveControls::exact_on_device: the CUDA backend stages the islands the exact solve takes on the
  // host, solves them there and copies their answers back; the CPU executors take the same path. With
  // the Tresca switch off, only the exact solve can end the stalled steps converged.
  if (skip_backend_run()) return;
  auto backend = GENERATE(from_range(batched_backends()));
  CAPTURE(backend_name(backend));
  const StackRun plain = run_tilted_stack(backend, 0, Method::automatic, 200, /*exact=*/false);
  const StackRun exact = run_tilted_stack(backend, 0, Method::automatic, 200, /*exact=*/true);
  CAPTURE(plain.unconverged, exact.unconverged, exact.drift, exact.outer);
  CHECK(plain.unconverged > 50);  // the stalled steps the exact solve is to end
  CHECK(exact.unconverged == 0);
  CHECK(exact.drift < 1e-6);
}
