// The kernels/ element functions on a CUDA device give the CPU's results. Compiled whenever the
// build has CUDA (CI compiles it with nvcc); without a GPU each test says so and skips.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // for the listener below (Catch2 v2)
#include <catch2/catch.hpp>

#include <random>

#ifdef STAGGER_HAVE_CUDA
#include <fstream>
#include <string>

#include "cuda/cublas_loader.h"
#include "kernels/cuda/element_checks.h"
#endif
#include "kernels/apgd.h"
#include "problem_builders.h"
#include "kernels/narrowphase.h"
#include "kernels/projections.h"
#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

#ifndef STAGGER_HAVE_CUDA
// The same names as in a CUDA build, each reported as skipped.
TEST_CASE("CUDA cone projections match the CPU", "[cuda]") { skip_gpu_test("this build has no CUDA support"); }
TEST_CASE("CUDA narrow phase matches the CPU", "[cuda]") { skip_gpu_test("this build has no CUDA support"); }
TEST_CASE("cuBLAS is opened on first use, not when stagger is loaded", "[cuda]") {
  skip_test("this build has no CUDA support");
}
#else
namespace {
bool cublas_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcublas") != std::string::npos) return true;
  return false;
}
// Whether cuBLAS was open when the test run started: after every static initializer (stagger's
// too), before any test could have opened it on purpose, whichever order the tests run in.
struct CublasAtRunStart {
  bool seen = false, opened = false, mapped = false;
};
CublasAtRunStart& cublas_at_run_start() {
  static CublasAtRunStart state;
  return state;
}
struct CublasProbe : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunStarting(Catch::TestRunInfo const& info) override {
    cublas_at_run_start() = {true, cublas_opened(), cublas_mapped()};
    TestEventListenerBase::testRunStarting(info);
  }
};
}  // namespace
CATCH_REGISTER_LISTENER(CublasProbe)

TEST_CASE("CUDA cone projections match the CPU", "[cuda]") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-2, 2);
  const int n = 10000;
  std::vector<double> a(n), b1(n), b2(n), mu(n);
  for (int i = 0; i < n; ++i) {
    a[i] = u(rng);
    b1[i] = u(rng);
    b2[i] = u(rng);
    mu[i] = std::fabs(u(rng)) / 2;
  }
  std::vector<double> ga = a, gb1 = b1, gb2 = b2;
  std::string why;
  // Only a machine without a usable device skips; on one that has it, a launch or copy that fails
  // is a failure (a crashing kernel must not read as a skip).
  if (skip_without_gpu()) return;
  const bool ran = cuda_project_cones(ga, gb1, gb2, mu, &why);
  INFO("CUDA error: " << why);
  REQUIRE(ran);
  for (int i = 0; i < n; ++i) {
    project_cone(a[i], b1[i], b2[i], mu[i]);
    // Same operations in the same order; only fused multiply-adds may differ in the last bits.
    REQUIRE(ga[i] == Approx(a[i]).margin(1e-14));
    REQUIRE(gb1[i] == Approx(b1[i]).margin(1e-14));
    REQUIRE(gb2[i] == Approx(b2[i]).margin(1e-14));
  }
}

TEST_CASE("CUDA narrow phase matches the CPU", "[cuda]") {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> u(-1, 1);
  const int n = 5000;
  std::vector<Shape> s0(n), s1(n);
  std::vector<BodyPose> p0(n), p1(n);
  for (int i = 0; i < n; ++i) {
    for (Shape* s : {&s0[i], &s1[i]}) {
      int kind = int(rng() % 3);
      s->type = kind == 0 ? ShapeType::sphere : (kind == 1 ? ShapeType::box : ShapeType::plane);
      s->radius = 0.3 + std::fabs(u(rng));
      s->half_extents = {0.3 + std::fabs(u(rng)), 0.3 + std::fabs(u(rng)), 0.3 + std::fabs(u(rng))};
    }
    p0[i] = BodyPose{{u(rng), u(rng), u(rng)}, normalized(Quat<double>{u(rng), u(rng), u(rng), u(rng)})};
    p1[i] = BodyPose{{u(rng), u(rng), u(rng)}, normalized(Quat<double>{u(rng), u(rng), u(rng), u(rng)})};
  }
  std::vector<ContactPoint<double>> gpu;
  std::vector<int> count;
  std::string why;
  // Only a machine without a usable device skips; on one that has it, a launch or copy that fails
  // is a failure (a crashing kernel must not read as a skip).
  if (skip_without_gpu()) return;
  const bool ran = cuda_collide_pairs(s0, p0, s1, p1, 0.05, gpu, count, &why);
  INFO("CUDA error: " << why);
  REQUIRE(ran);
  int with_contacts = 0;
  for (int i = 0; i < n; ++i) {
    ContactPoint<double> cpu[kMaxPairContacts];
    bool swapped;
    int c = collide(s0[i], p0[i], s1[i], p1[i], 0.05, cpu, swapped);
    REQUIRE(count[i] == c);
    with_contacts += c > 0;
    for (int k = 0; k < c; ++k) {
      const ContactPoint<double>& g = gpu[size_t(i) * kMaxPairContacts + k];
      REQUIRE(g.feature == cpu[k].feature);
      REQUIRE(g.gap == Approx(cpu[k].gap).margin(1e-12));
      REQUIRE(norm(g.normal - cpu[k].normal) < 1e-12);
      REQUIRE(norm(g.point - cpu[k].point) < 1e-12);
    }
  }
  REQUIRE(with_contacts > 100);
}

// Needs no GPU: cuBLAS is not loaded with stagger (its start-up cost every process 0.35 s) but on the
// dense islands' first product, and then every function stagger calls resolves.
TEST_CASE("cuBLAS is opened on first use, not when stagger is loaded", "[cuda]") {
  REQUIRE(cublas_at_run_start().seen);
  REQUIRE_FALSE(cublas_at_run_start().opened);
  REQUIRE_FALSE(cublas_at_run_start().mapped);
  const CublasApi& api = cublas_api();
  CHECK(cublas_opened());
  CHECK(cublas_mapped());
  CHECK(api.create != nullptr);
  CHECK(api.destroy != nullptr);
  CHECK(api.set_stream != nullptr);
  CHECK(api.dgemv_strided_batched != nullptr);
  CHECK(api.sgemv_strided_batched != nullptr);
  REQUIRE(api.status_string != nullptr);
  CHECK(std::string(api.status_string(CUBLAS_STATUS_SUCCESS)).size() > 0);
  CHECK(&cublas_api() == &api);
}
#endif
