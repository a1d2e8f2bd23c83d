// Shared helpers of the tests: scenes from the repository, body lookup, small vector checks.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "gpu_lock.h"
#include "test_paths.h"
#include "step/backend.h"
#include "solve/contact_block.h"
#include "scene/scene.h"
#include "step/world.h"

namespace stagger::test {

// Catch2 v2 has no "skipped" result: a test that cannot run here prints this marker with the reason,
// which ctest reports as skipped (SKIP_REGULAR_EXPRESSION, tests/CMakeLists.txt) and scripts/test.sh
// lists; a test that ran but left out a part (a backend) prints kNotRunMarker, which test.sh lists too.
constexpr const char* kSkipMarker = "STAGGER_SKIPPED: ";
constexpr const char* kNotRunMarker = "STAGGER_PART_NOT_RUN: ";

// STAGGER_REQUIRE_GPU=1 (a run on a GPU machine): a GPU test that cannot run fails instead of skipping.
inline bool gpu_required() {
  const char* v = std::getenv("STAGGER_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// Says why the test does not run; the caller returns right after.
inline void skip_test(const std::string& why) {
  std::cout << kSkipMarker << why << std::endl;
  WARN("skipped: " << why);
}

// For a test that needs a GPU: false when one is usable; else skips (or fails under
// STAGGER_REQUIRE_GPU=1) with `why` and returns true.
inline bool skip_gpu_test(const std::string& why) {
  if (gpu_required()) FAIL("STAGGER_REQUIRE_GPU=1, but this test cannot use a GPU: " << why);
  skip_test(why);
  return true;
}
inline bool skip_without_gpu() { return !::test::use_the_gpu() && skip_gpu_test(cuda_unavailable_reason()); }

// For a test that ran on every backend but one it could not use here.
inline void part_not_run(const std::string& what, const std::string& why) {
  std::cout << kNotRunMarker << what << ": " << why << std::endl;
}

inline Scene validation_scene(const std::string& name) {
  return load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/validation/" + name + ".json");
}

inline int body_index(const World& world, const std::string& id) {
  const auto& ids = world.bodies().id;
  for (int i = 0; i < int(ids.size()); ++i)
    if (ids[i] == id) return i;
  throw std::runtime_error("no body " + id);
}

// Runs the scene to its end and returns how far the body "ball" (a sphere of radius 0.1 m placed with
// its centre at 0.1 m) has sunk into what it rests on; checks that it has come to rest.
inline double ball_overlap_at_rest(const Scene& scene, WorldOptions options = {}) {
  World world(scene, options);
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  const int ball = body_index(world, "ball");
  CHECK(std::abs(world.bodies().v[ball].z) < 1e-6);
  return 0.1 - world.bodies().x[ball].z;
}

// Runs a scene in which the body "ball" falls onto a support at speed v0 (along -z) until its first
// contact has pushed and let go: the rebound speed over v0 and the steps with a positive normal impulse.
struct MeasuredImpact {
  double rebound;
  int pushing_steps;
};
inline MeasuredImpact measure_impact(const Scene& scene, double v0, int max_steps) {
  World world(scene);
  int pushing = 0;
  for (int s = 0; s < max_steps; ++s) {
    world.step();
    const bool push = !world.solution().alpha.empty() && world.solution().alpha[0] > 0;
    if (push) ++pushing;
    else if (pushing > 0) break;
  }
  return {world.bodies().v[body_index(world, "ball")].z / v0, pushing};
}

inline const BodyDesc& body_desc(const Scene& scene, const std::string& id) {
  for (const BodyDesc& b : scene.bodies)
    if (b.id == id) return b;
  throw std::runtime_error("no body " + id);
}

// Shapes for tests that build scenes in code.
inline Shape sphere_shape(double radius) {
  Shape s;
  s.type = ShapeType::sphere;
  s.radius = radius;
  return s;
}
inline Shape box_shape(double a, double b, double c) {
  Shape s;
  s.type = ShapeType::box;
  s.half_extents = {a, b, c};
  return s;
}
inline Shape plane_shape() {
  Shape s;
  s.type = ShapeType::plane;
  return s;
}

// A body description for tests that build scenes in code (mass 1 for dynamic bodies).
inline BodyDesc make_body(std::string id, Shape shape, Vec3d x, BodyKind kind) {
  BodyDesc b;
  b.id = std::move(id);
  b.shape = shape;
  b.position = x;
  b.kind = kind;
  b.mass = kind == BodyKind::dynamic ? 1.0 : 0.0;
  return b;
}

inline std::string backend_name(SolverBackend b) {
  switch (b) {
    case SolverBackend::batched: return "batched";
    case SolverBackend::reference: return "reference";
    case SolverBackend::cuda: return "cuda";
  }
  return "?";
}

// Which backends a test over backends (tag [backends]) runs. Plain: the host's, the batched CPU backend
// (and the Eigen reference). With STAGGER_TEST_BACKENDS=cuda: the CUDA backend, in ctest's
// "[CUDA backend]" copy of each such test (tests/CMakeLists.txt), which a machine without a usable GPU
// reports as skipped: a run there does not count a test as passed with its CUDA part left out.
inline bool cuda_backend_run() {
  const char* v = std::getenv("STAGGER_TEST_BACKENDS");
  return v && std::string(v) == "cuda";
}
// First thing in a test over backends: true (after saying why, or failing under STAGGER_REQUIRE_GPU=1)
// when this is the CUDA backend's run and it cannot use a GPU; the test then returns.
inline bool skip_backend_run() { return cuda_backend_run() && skip_without_gpu(); }

// The solve backends a test compares: the batched CPU backend and the reference, or the CUDA backend.
inline std::vector<SolverBackend> solve_backends() {
  if (cuda_backend_run()) return {SolverBackend::cuda};
  return {SolverBackend::batched, SolverBackend::reference};
}

// The batched backends only (the long scenes, where the reference would take minutes).
inline std::vector<SolverBackend> batched_backends() {
  if (cuda_backend_run()) return {SolverBackend::cuda};
  return {SolverBackend::batched};
}

// The solve controls of the tests: the executors' defaults, or with STAGGER_TEST_GPU_SHAPE=1 the CPU
// executor in the GPU's shape, 32-contact blocks and a loop check every 8 iterations (ctest runs the
// equivalence tests both ways: tests/CMakeLists.txt).
inline SolveControls test_controls() {
  SolveControls controls;
  const char* v = std::getenv("STAGGER_TEST_GPU_SHAPE");
  if (v && std::string(v) == "1") {
    controls.block_size = kGpuBlockSize;
    controls.loop_check_interval = kGpuLoopCheckInterval;
  }
  return controls;
}

// The Tresca fixed point to a tight tolerance, as the FCLIB benchmarks run it: inner QPs to a tenth of
// it, 300 APGD iterations per QP, up to `max_outer` outer iterations.
inline SolverSettings tresca_to(double tolerance, int max_outer) {
  SolverSettings s;
  s.method = Method::tresca_fixed_point;
  s.tolerance = tolerance;
  s.tolerance_set = true;
  s.inner_tolerance = 0.1 * tolerance;
  s.max_outer_iterations = max_outer;
  s.max_inner_iterations = 300;
  return s;
}

// Options for a world on this backend (the executors' default controls); on the CUDA backend the
// process takes the tests' GPU lock first (tests/gpu_lock.h).
inline WorldOptions backend_options(SolverBackend backend) {
  if (backend == SolverBackend::cuda) ::test::use_the_gpu();
  WorldOptions options;
  options.backend = backend;
  return options;
}

inline WorldOptions on_backend(SolverBackend backend) {
  WorldOptions options = backend_options(backend);
  options.controls = test_controls();
  return options;
}

}  // namespace stagger::test
