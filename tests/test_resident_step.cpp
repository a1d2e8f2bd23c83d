// The resident step (host/resident_step.h): the CUDA backend's whole step, here run by its CPU twin.
// Every stage of it (margins, both collision stages, problem assembly, solve, velocity update, pose
// update, quality, fault check) must give bit for bit what the host step gives: the same element
// functions in the same order, only where the data live differs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "checkpoint.h"
#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

namespace {

Scene repository_scene(const std::string& path) { return load_scene(std::string(STAGGER_SOURCE_DIR) + "/" + path); }

WorldOptions resident(Precision precision = Precision::f64) {
  WorldOptions o;
  o.resident = true;
  o.controls.precision = precision;
  return o;
}

// Positions, orientations and velocities equal bit for bit.
void require_identical_states(const Bodies& a, const Bodies& b) {
  REQUIRE(a.size() == b.size());
  int differ = 0;
  for (int i = 0; i < a.size(); ++i) {
    const bool same = a.x[i].x == b.x[i].x && a.x[i].y == b.x[i].y && a.x[i].z == b.x[i].z && a.q[i].w == b.q[i].w &&
                      a.q[i].x == b.q[i].x && a.q[i].y == b.q[i].y && a.q[i].z == b.q[i].z && a.v[i].x == b.v[i].x &&
                      a.v[i].y == b.v[i].y && a.v[i].z == b.v[i].z && a.w[i].x == b.w[i].x && a.w[i].y == b.w[i].y &&
                      a.w[i].z == b.w[i].z;
    differ += same ? 0 : 1;
  }
  REQUIRE(differ == 0);
}

void require_same_reports(const StepReport& a, const StepReport& b) {
  REQUIRE(a.contacts == b.contacts);
  REQUIRE(a.islands == b.islands);
  REQUIRE(a.outer_iterations == b.outer_iterations);
  REQUIRE(a.inner_iterations == b.inner_iterations);
  REQUIRE(a.quality.signorini_violation == b.quality.signorini_violation);
  REQUIRE(a.quality.complementarity == b.quality.complementarity);
  REQUIRE(a.quality.cone_violation == b.quality.cone_violation);
  REQUIRE(a.quality.dissipation_violation == b.quality.dissipation_violation);
  REQUIRE(a.quality.penetration_after == b.quality.penetration_after);
  REQUIRE(a.quality.sliding_contacts == b.quality.sliding_contacts);
  REQUIRE(a.quality.natural_map_error == b.quality.natural_map_error);
}

}  // namespace

TEST_CASE("the resident step's CPU twin gives the host step's states bit for bit", "[resident][equivalence]") {
  struct Case {
    const char* path;
    int steps;
  };
  // Boxes with friction and restitution, a kinematic conveyor, a shaken box of spheres (sinusoidal
  // kinematic walls, many islands), a mesh arch, a restitution case and the Painleve rod.
  for (Case c : {Case{"scenes/validation/card_house.json", 150}, Case{"scenes/validation/conveyor.json", 150},
                 Case{"scenes/brazil_nut_small.json", 200}, Case{"scenes/validation/catenary_arch.json", 60},
                 Case{"scenes/validation/partial_bounce.json", 700}, Case{"scenes/validation/painleve_rod.json", 200}}) {
    CAPTURE(c.path);
    Scene scene = repository_scene(c.path);
    World host(scene), twin(scene, resident());
    int contacts = 0;
    for (int s = 0; s < c.steps; ++s) {
      host.step();
      twin.step();
      require_same_reports(host.last_step(), twin.last_step());
      contacts = std::max(contacts, host.last_step().contacts);
    }
    REQUIRE(contacts > 0);
    require_identical_states(host.bodies(), twin.bodies());
    REQUIRE(host.time() == twin.time());
  }
}

TEST_CASE("the resident step's twin matches the host step with the pyramid, in float, and by other methods",
          "[resident][equivalence]") {
  Scene base = repository_scene("scenes/brazil_nut_small.json");
  SECTION("pyramid friction") {
    base.solver.friction_model = FrictionModel::pyramid;
    World host(base), twin(base, resident());
    for (int s = 0; s < 120; ++s) {
      host.step();
      twin.step();
    }
    require_identical_states(host.bodies(), twin.bodies());
  }
  SECTION("float iterations") {
    WorldOptions f32;
    f32.controls.precision = Precision::f32;
    World host(base, f32), twin(base, resident(Precision::f32));
    for (int s = 0; s < 120; ++s) {
      host.step();
      twin.step();
      REQUIRE(host.last_step().inner_iterations == twin.last_step().inner_iterations);
    }
    require_identical_states(host.bodies(), twin.bodies());
  }
  SECTION("successive relaxation") {
    base.solver.method = Method::successive_relaxation;
    World host(base), twin(base, resident());
    for (int s = 0; s < 80; ++s) {
      host.step();
      twin.step();
    }
    require_identical_states(host.bodies(), twin.bodies());
  }
}

TEST_CASE("a resident world restored from its state continues bit-identically", "[resident][checkpoint]") {
  Scene scene = repository_scene("scenes/brazil_nut_small.json");
  World straight(scene, resident()), first(scene, resident());
  for (int s = 0; s < 100; ++s) {
    straight.step();
    first.step();
  }
  const WorldState saved = first.state();
  World resumed(scene, resident());
  resumed.restore(saved);
  for (int s = 0; s < 100; ++s) {
    straight.step();
    resumed.step();
  }
  require_identical_states(straight.bodies(), resumed.bodies());
  REQUIRE(resumed.steps_done() == 200);
}

TEST_CASE("a resident world reports a runaway body like the host world", "[resident][reliability]") {
  Scene scene = repository_scene("scenes/validation/free_fall.json");
  scene.limits.max_speed = 0.5;  // the falling body passes 0.5 m/s after about 51 ms
  World host(scene), twin(scene, resident());
  int host_fault_step = -1, twin_fault_step = -1;
  std::string host_what, twin_what;
  for (int s = 0; s < 200 && (host_fault_step < 0 || twin_fault_step < 0); ++s) {
    if (host_fault_step < 0) {
      host.step();
      if (auto f = host.check_state()) host_fault_step = s, host_what = f->what;
    }
    if (twin_fault_step < 0) {
      twin.step();
      if (auto f = twin.check_state()) twin_fault_step = s, twin_what = f->what;
    }
  }
  REQUIRE(host_fault_step > 0);
  REQUIRE(twin_fault_step == host_fault_step);
  REQUIRE(twin_what == host_what);
  REQUIRE(twin_what.find("runs away") != std::string::npos);
}

TEST_CASE("the reference backend has no resident step", "[resident]") {
  WorldOptions o = resident();
  o.backend = SolverBackend::reference;
  REQUIRE_THROWS_AS(World(validation_scene("free_fall"), o), std::invalid_argument);
}
