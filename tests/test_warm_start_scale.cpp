// The warm start's scale (kernels/warm_start_scale.h, SolveControls::scale_warm_start): each granular
// island's warm start times the scalar that minimizes its QP's objective along it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "helpers.h"
#include "output/state_hash.h"

using namespace stagger;
using namespace stagger::test;

namespace {
struct BedRun {
  long long apgd_iterations = 0;
  int unconverged_steps = 0;
  double fastest = 0;  // the fastest bead at the end, m/s
};
BedRun resting_bed(bool scale, int steps) {
  WorldOptions options;
  options.controls.scale_warm_start = scale;
  World world(load_scene(std::string(STAGGER_SOURCE_DIR) + "/bench/scenes/spheres_resting_10k.json"), options);
  BedRun run;
  for (int s = 0; s < steps; ++s) {
    world.step();
    run.apgd_iterations += world.last_step().inner_iterations;
    run.unconverged_steps += world.last_step().converged ? 0 : 1;
  }
  for (const Vec3d& v : world.bodies().v) run.fastest = std::max(run.fastest, norm(v));
  return run;
}
}  // namespace

TEST_CASE("a scaled warm start solves a resting bed in fewer iterations, and the bed stays at rest", "[solver]") {
  // Each step of a bed at rest inherits the last step's leftover error through the bodies'
  // velocities, mostly as a uniform stretch of every impulse, which APGD removes at its slowest rate
  // (docs/method.md, "The warm start's scale"). Measured: 25.4 APGD iterations a step unscaled, 10.4
  // scaled (100 steps of the 10,164-sphere bed).
  const BedRun plain = resting_bed(false, 100), scaled = resting_bed(true, 100);
  CAPTURE(plain.apgd_iterations, scaled.apgd_iterations, plain.fastest, scaled.fastest);
  CHECK(plain.unconverged_steps == 0);
  CHECK(scaled.unconverged_steps == 0);
  CHECK(scaled.apgd_iterations < 0.6 * plain.apgd_iterations);
  CHECK(scaled.fastest < 1e-4);  // at rest: under 0.1 mm/s
}

TEST_CASE("the resident step's CPU twin scales the warm start as the host step does, bit for bit", "[solver]") {
  // The CUDA backend runs the same loops: its CPU twin must give the host step's states.
  Scene scene = load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/brazil_nut_small.json");
  scene.solver = SolverSettings{};  // auto: the bed's large islands are granular
  WorldOptions host, twin;
  host.controls.scale_warm_start = twin.controls.scale_warm_start = true;
  twin.resident = true;
  World a(scene, host), b(scene, twin);
  for (int s = 0; s < 300; ++s) {
    a.step();
    b.step();
    CAPTURE(s);
    REQUIRE(state_hash(a.bodies()) == state_hash(b.bodies()));
  }
}
