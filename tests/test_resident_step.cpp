// The resident step (host/step/resident_step.h): the CUDA backend's whole step, here run by its CPU twin.
// Every stage of it (margins, both collision stages, problem assembly, solve, velocity update, pose
// update, quality, fault check) must give bit for bit what the host step gives: the same element
// functions in the same order, only where the data live differs.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/checkpoint.h"
#include "cli_helpers.h"
#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

namespace {

Scene repository_scene(const std::string& path) { return load_scene(std::string(STAGGER_SOURCE_DIR) + "/" + path); }

// The host step and its resident twin, both in the test's shape (test_controls: the CPU's blocks, or
// the GPU's under STAGGER_TEST_GPU_SHAPE=1), so that the two compare like with like.
WorldOptions host_step(Precision precision = Precision::f64) {
  WorldOptions o = on_backend(SolverBackend::batched);
  o.controls.precision = precision;
  return o;
}
WorldOptions resident(Precision precision = Precision::f64) {
  WorldOptions o = host_step(precision);
  o.resident = true;
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
  // Measured on the host in contact order, on the device by blocks then islands: rounding only.
  REQUIRE(a.quality.natural_map_error == Approx(b.quality.natural_map_error).epsilon(1e-12).margin(1e-300));
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
    World host(scene, host_step()), twin(scene, resident());
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
    World host(base, host_step()), twin(base, resident());
    for (int s = 0; s < 120; ++s) {
      host.step();
      twin.step();
    }
    require_identical_states(host.bodies(), twin.bodies());
  }
  SECTION("float iterations") {
    World host(base, host_step(Precision::f32)), twin(base, resident(Precision::f32));
    for (int s = 0; s < 120; ++s) {
      host.step();
      twin.step();
      REQUIRE(host.last_step().inner_iterations == twin.last_step().inner_iterations);
    }
    require_identical_states(host.bodies(), twin.bodies());
  }
  SECTION("successive relaxation") {
    base.solver.method = Method::successive_relaxation;
    World host(base, host_step()), twin(base, resident());
    for (int s = 0; s < 80; ++s) {
      host.step();
      twin.step();
    }
    require_identical_states(host.bodies(), twin.bodies());
  }
  SECTION("Coulomb APGD") {
    base.solver.method = Method::coulomb_apgd;
    base.solver.tolerance = 2e-3;
    base.solver.tolerance_set = true;
    World host(base, host_step()), twin(base, resident());
    for (int s = 0; s < 120; ++s) {
      host.step();
      twin.step();
      REQUIRE(host.last_step().inner_iterations == twin.last_step().inner_iterations);
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
  World host(scene, host_step()), twin(scene, resident());
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

namespace {

// `stagger run` with the batched backend's resident step (STAGGER_RESIDENT=1) or the host step.
::test::Outcome run_stagger(bool resident_step, const std::string& args, const ::test::fs::path& dir) {
  if (resident_step) ::setenv("STAGGER_RESIDENT", "1", 1);
  // The CPU backend named: on a GPU machine the default would be the CUDA backend, which has no twin.
  ::test::Outcome r = ::test::stagger(args + " --backend cpu", dir);
  ::unsetenv("STAGGER_RESIDENT");
  return r;
}

}  // namespace

TEST_CASE("stagger run on the resident step writes the host step's outputs", "[resident][cli]") {
  namespace fs = ::test::fs;
  const fs::path dir = ::test::temp_dir("resident");
  // The small Brazil-nut bed with frames (CSV and VTK, contact forces included) every 100 steps.
  std::string text = ::test::slurp(fs::path(STAGGER_SOURCE_DIR) / "scenes" / "brazil_nut_small.json");
  const std::string every = "\"every\": 1000";
  REQUIRE(text.find(every) != std::string::npos);
  text.replace(text.find(every), every.size(), "\"every\": 100, \"format\": \"both\"");
  const fs::path scene = ::test::write_scene(dir, "bed.json", text);
  const std::string args = "run " + scene.string() + " --steps 300 --hash --quiet --threads 2 --out ";
  const ::test::Outcome host = run_stagger(false, args + (dir / "host").string(), dir);
  const ::test::Outcome twin = run_stagger(true, args + (dir / "twin").string(), dir);
  REQUIRE(host.code == 0);
  REQUIRE(twin.code == 0);
  REQUIRE(::test::hash_lines(host.out).size() == 300);
  REQUIRE(::test::hash_lines(twin.out) == ::test::hash_lines(host.out));
  REQUIRE(::test::slurp(dir / "twin" / "final_state.csv") == ::test::slurp(dir / "host" / "final_state.csv"));
  // Without --hash nothing asks for the poses every step: the outputs must still fetch them.
  std::string no_hash = args;
  no_hash.replace(no_hash.find(" --hash"), 7, "");
  REQUIRE(run_stagger(true, no_hash + (dir / "twin2").string(), dir).code == 0);
  REQUIRE(::test::slurp(dir / "twin2" / "final_state.csv") == ::test::slurp(dir / "host" / "final_state.csv"));
  int frames = 0;
  for (const auto& entry : fs::directory_iterator(dir / "host" / "frames")) {
    CAPTURE(entry.path().filename().string());
    REQUIRE(::test::slurp(dir / "twin" / "frames" / entry.path().filename()) == ::test::slurp(entry.path()));
    ++frames;
  }
  REQUIRE(frames >= 4 * 2 + 3);  // 4 frames of bodies and contacts (VTK) and of states (CSV), plus indices
  const auto summary_host = nlohmann::json::parse(::test::slurp(dir / "host" / "summary.json"));
  const auto summary_twin = nlohmann::json::parse(::test::slurp(dir / "twin" / "summary.json"));
  for (const char* key : {"tracks", "contacts_mean", "max_penetration", "converged_fraction", "final_kinetic_energy"}) {
    CAPTURE(key);
    REQUIRE(summary_host.contains(key));
    REQUIRE(summary_twin[key] == summary_host[key]);
  }

  // A run that fails (a falling body passes 2.5 m/s at step 26) keeps the same last good state.
  const fs::path blowup = ::test::write_scene(dir, "blowup.json", R"({"time_step": 0.01, "steps": 50, "bodies": [
    {"id": "floor", "shape": {"type": "plane"}, "fixed": true},
    {"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [0, 0, 0.1], "mass": 1},
    {"id": "rocket", "shape": {"type": "sphere", "radius": 0.1}, "position": [3, 0, 5], "mass": 1}],
    "limits": {"max_speed": 2.5}})");
  const ::test::Outcome host_fail = run_stagger(false, "run " + blowup.string() + " --out " + (dir / "hf").string(), dir);
  const ::test::Outcome twin_fail = run_stagger(true, "run " + blowup.string() + " --out " + (dir / "tf").string(), dir);
  REQUIRE(host_fail.code == 1);
  REQUIRE(twin_fail.code == 1);
  for (const std::string& err : {host_fail.err, twin_fail.err})
    REQUIRE(err.find("step 26 (t = 0.26 s): body \"rocket\" runs away: speed 2.551 m/s") != std::string::npos);
  REQUIRE(::test::slurp(dir / "tf" / "final_state.csv") == ::test::slurp(dir / "hf" / "final_state.csv"));
  fs::remove_all(dir);
}

TEST_CASE("a run whose device fails keeps the last state read back from it", "[resident][cli][reliability]") {
  namespace fs = ::test::fs;
  const fs::path dir = ::test::temp_dir("dying");
  // Frames every 10 steps read the state back; the twin's device dies after 25 steps and stays dead,
  // so neither the good state of step 25 kept on it nor anything else can be read any more.
  const fs::path scene = ::test::write_scene(dir, "drop.json", R"({"time_step": 0.01, "steps": 50,
    "output": {"every": 10, "format": "csv"}, "bodies": [
    {"id": "floor", "shape": {"type": "plane"}, "fixed": true},
    {"id": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [0, 0, 0.1], "mass": 1},
    {"id": "rocket", "shape": {"type": "sphere", "radius": 0.1}, "position": [3, 0, 5], "mass": 1}]})");
  ::setenv("STAGGER_RESIDENT_FAILS_AFTER", "25", 1);
  const ::test::Outcome r = run_stagger(true, "run " + scene.string() + " --quiet --out " + (dir / "out").string(), dir);
  ::unsetenv("STAGGER_RESIDENT_FAILS_AFTER");
  REQUIRE(r.code == 1);
  REQUIRE(r.err.find("injected device fault") != std::string::npos);
  REQUIRE(r.err.find("the last state read back from it is that of step 20") != std::string::npos);
  REQUIRE(::test::slurp(dir / "out" / "final_state.csv") == ::test::slurp(dir / "out" / "frames" / "frame_00000020.csv"));
  const auto summary = nlohmann::json::parse(::test::slurp(dir / "out" / "summary.json"));
  REQUIRE(summary["status"] == "failed");
  REQUIRE(summary["simulated_time"].get<double>() == Approx(0.2));
  fs::remove_all(dir);
}
