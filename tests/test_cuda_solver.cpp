// The CUDA solve backend against the batched CPU backend (the same algorithm, run by OpenMP) and the
// Eigen reference: on island problems at the QP level, and on whole steps of the validation scenes.
// Compiled whenever the build has CUDA (CI compiles it with nvcc); without a GPU each test says so
// and skips. The analytic cases of VALIDATION.md run on the CUDA backend in test_validation.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "helpers.h"
#include "kernels/delassus.h"
#include "problem_builders.h"
#include "solve/quality.h"
#include "solve/reference/staggered_reference.h"
#include "solve/staggered.h"
#ifdef STAGGER_HAVE_CUDA
#include "cuda/cuda_solver.h"
#endif

using namespace stagger;
using namespace stagger::test;

namespace {

double max_state_difference(const Bodies& a, const Bodies& b) {
  double d = 0;
  for (int i = 0; i < a.size(); ++i)
    d = std::max({d, norm(a.x[i] - b.x[i]), norm(a.v[i] - b.v[i]), norm(a.w[i] - b.w[i])});
  return d;
}

}  // namespace

#ifdef STAGGER_HAVE_CUDA
TEST_CASE("the CUDA backend equals the CPU backends on island problems", "[cuda][solver][equivalence]") {
  if (skip_without_gpu()) return;
  // Small islands (many per warp block), islands of 22 warp blocks (a warp per island reduces them)
  // and one island of 10,500 contacts (329 warp blocks: more than 256, so one thread block per island
  // reduces it, the path only a large island takes), cone and pyramid, every method.
  struct Shape {
    int islands, bodies, contacts;
  };
  for (Shape shape : {Shape{40, 3, 4}, Shape{3, 400, 700}, Shape{1, 16000, 10500}}) {
    for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
      for (auto method : {Method::staggered, Method::successive_relaxation, Method::ccp, Method::tresca_fixed_point,
                         Method::coulomb_apgd}) {
        for (unsigned seed = 1; seed <= 3; ++seed) {
          // One large problem per model and method; not successive relaxation, which does not reach
          // 1e-10 there in 500 outer iterations (5e-4 and 3e-4 on the CPU; the others in 88-244).
          if (shape.contacts > 10000 && (seed > 1 || method == Method::successive_relaxation)) continue;
          CAPTURE(shape.islands, shape.contacts, int(model), int(method), seed);
          ContactProblem p = random_problem(seed, shape.islands, shape.bodies, shape.contacts, 0.2, model, 8);
          CudaSolver cuda;
          BatchedSolver cpu;
          SolveControls same;  // the CUDA backend's algorithm: no polish, no exact solve, no sinking sweeps (CudaExec::kPolish)
          same.polish = false;
          same.exact_small_islands = false;
          same.sinking_sweeps = false;
          // ... and in the GPU's shape: Coulomb APGD's answer depends on where its loop is checked (the
          // CPU's two shapes part by up to 1.5e-7 on these problems, both within the tolerance; found
          // on an H200), the other methods' answers do not.
          same.block_size = kGpuBlockSize;
          same.loop_check_interval = kGpuLoopCheckInterval;
          SolveResult g = cuda.solve(p, tight(method)), c = cpu.solve(p, tight(method), same);
          REQUIRE(g.islands.size() == c.islands.size());
          for (size_t i = 0; i < g.islands.size(); ++i) {
            REQUIRE(g.islands[i].converged == c.islands[i].converged);
            if (method != Method::ccp) REQUIRE(g.islands[i].error <= 1e-10);
          }
          // Same algorithm, different summation order inside a block (tree vs sequence): the
          // iterates differ by rounding, and both meet the same tight tolerance.
          REQUIRE(result_difference(p, g, c) <= 1e-7);
          if (shape.contacts <= 4 && method != Method::ccp)
            REQUIRE(result_difference(p, g, solve_reference(p, tight(method))) <= 1e-6);
        }
      }
    }
  }
}

TEST_CASE("a CUDA solve reports the same iteration counts on the same problem twice", "[cuda][solver][determinism]") {
  if (skip_without_gpu()) return;
  ContactProblem p = random_problem(7, 5, 300, 500, 0.5);
  SolverSettings s;  // defaults: what runs use
  CudaSolver a, b;
  SolveResult ra = a.solve(p, s), rb = b.solve(p, s);
  REQUIRE(ra.alpha == rb.alpha);
  REQUIRE(ra.beta == rb.beta);
  for (size_t i = 0; i < ra.islands.size(); ++i) {
    REQUIRE(ra.islands[i].inner_iterations == rb.islands[i].inner_iterations);
    REQUIRE(ra.islands[i].outer_iterations == rb.islands[i].outer_iterations);
  }
}

TEST_CASE("the CUDA backend does not polish: a stalled island runs the outer loop alone", "[cuda][solver][gauss_seidel]") {
  if (skip_without_gpu()) return;
  // The problem of test_gauss_seidel.cpp whose outer loop stalls: the CPU backend finishes it by
  // Gauss-Seidel sweeps, the CUDA backend has none (CudaExec::kPolish) and iterates as the CPU does
  // without them.
  const ContactProblem p = granular_problem(200, 600, 5);
  const SolverSettings s = tresca_to(1e-8, 1000);
  SolveControls plain = test_controls();
  plain.polish = false;
  plain.exact_small_islands = false;
  plain.sinking_sweeps = false;
  const SolveResult g = CudaSolver{}.solve(p, s);
  const SolveResult c = BatchedSolver{}.solve(p, s, plain);
  REQUIRE(g.islands[0].converged);
  CHECK(g.islands[0].sweeps == 0);
  REQUIRE(measured_natural_map_error(p, g) <= s.tolerance * 1.01);
  REQUIRE(result_difference(p, g, c) <= 1e-7);
}

TEST_CASE("the CUDA dense small-island path (cuBLAS products) finds the CPU's impulses", "[cuda][solver][dense]") {
  if (skip_without_gpu()) return;
  // Islands of 1 to 20 contacts: at a threshold of 8 some take the dense path on the GPU and the
  // rest stay matrix-free in the same solve; at 32 all do. Compared with the CPU's matrix-free solve.
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (unsigned seed = 1; seed <= 4; ++seed) {
      CAPTURE(int(model), seed);
      ContactProblem p = varied_problem(seed, 40, 20, 0.2, model, 6);
      SolveControls matrix_free;
      matrix_free.dense_max_contacts = 0;
      matrix_free.polish = false;  // the CUDA backend has none of these (CudaExec::kPolish)
      matrix_free.exact_small_islands = false;
      matrix_free.sinking_sweeps = false;
      BatchedSolver cpu;
      const SolveResult c = cpu.solve(p, tight(), matrix_free);
      for (int threshold : {8, 32}) {
        CAPTURE(threshold);
        SolveControls dense;
        dense.dense_max_contacts = threshold;
        CudaSolver cuda;
        const SolveResult g = cuda.solve(p, tight(), dense);
        for (size_t i = 0; i < g.islands.size(); ++i) {
          REQUIRE(g.islands[i].converged == c.islands[i].converged);
          REQUIRE(g.islands[i].error <= 1e-10);
        }
        REQUIRE(result_difference(p, g, c) <= 1e-7);
      }
    }
  }
}
#else
// The same names as in a CUDA build, each reported as skipped.
TEST_CASE("the CUDA backend equals the CPU backends on island problems", "[cuda][solver][equivalence]") {
  skip_gpu_test("this build has no CUDA support");
}
TEST_CASE("a CUDA solve reports the same iteration counts on the same problem twice", "[cuda][solver][determinism]") {
  skip_gpu_test("this build has no CUDA support");
}
TEST_CASE("the CUDA backend does not polish: a stalled island runs the outer loop alone", "[cuda][solver][gauss_seidel]") {
  skip_gpu_test("this build has no CUDA support");
}
TEST_CASE("the CUDA dense small-island path (cuBLAS products) finds the CPU's impulses", "[cuda][solver][dense]") {
  skip_gpu_test("this build has no CUDA support");
}
#endif

TEST_CASE("the CUDA backend and the CPU backend agree step by step", "[cuda][world][equivalence]") {
  if (skip_without_gpu()) return;
  for (const char* name : {"box_stack", "card_house", "block_slides", "sphere_rolls"}) {
    CAPTURE(name);
    Scene scene = validation_scene(name);
    scene.solver.tolerance = 1e-10;
    scene.solver.inner_tolerance = 1e-13;
    scene.solver.max_outer_iterations = 400;
    scene.solver.max_inner_iterations = 5000;
    // The CUDA backend's algorithm on the CPU: no polish (CudaExec::kPolish), which 400 outer
    // iterations at 1e-10 would otherwise reach on the card house (found on an H100), no exact
    // solve of an island left unconverged, and no sinking sweeps. On both, no Tresca switch: at 1e-10
    // the card house's staggered loop slows near 1e-5, and the Tresca fixed point it would switch to
    // takes 55,700 APGD iterations a step against 148 (found on an H200, where 200 steps of it did
    // not end in 145 s; docs/method.md, Known behaviour). The switch's own GPU test is the stack on
    // a slope (test_validation.cpp).
    WorldOptions same, on_gpu = on_backend(SolverBackend::cuda);
    same.controls.polish = false;
    same.controls.exact_small_islands = false;
    same.controls.sinking_sweeps = false;
    same.controls.tresca_switch_window = on_gpu.controls.tresca_switch_window = 0;
    World cpu(scene, same), gpu(scene, on_gpu);
    for (int s = 0; s < 200; ++s) {
      cpu.step();
      gpu.step();
      REQUIRE(max_state_difference(cpu.bodies(), gpu.bodies()) < 1e-7);
    }
  }
}

TEST_CASE("the same scene run twice on the GPU gives bit-identical states", "[cuda][world][determinism]") {
  if (skip_without_gpu()) return;
  Scene scene = load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/brazil_nut_small.json");
  World a(scene, on_backend(SolverBackend::cuda)), b(scene, on_backend(SolverBackend::cuda));
  for (int s = 0; s < 300; ++s) {
    a.step();
    b.step();
  }
  REQUIRE(a.last_step().contacts > 300);
  REQUIRE(max_state_difference(a.bodies(), b.bodies()) == 0.0);
}

TEST_CASE("a CUDA world without a usable GPU is refused with a reason", "[cuda][cli]") {
  if (cuda_device_available()) {
    skip_test("this machine has a usable CUDA device");
    return;
  }
  REQUIRE(!cuda_unavailable_reason().empty());
  REQUIRE_THROWS_AS(World(validation_scene("free_fall"), on_backend(SolverBackend::cuda)), std::runtime_error);
}
