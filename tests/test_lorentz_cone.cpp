// The Lorentz-cone pieces of the exact solve's interior-point method (host/solve/lorentz_cone.h): the
// Nesterov-Todd scaling maps the pair onto one point, its powers are powers, Jordan division undoes
// the product, and the step to the boundary lands on it. Checked on random pairs, and on pairs near
// the boundary (sliding contacts at the end of a solve), where the textbook formulas lose their digits.
#include <catch2/catch.hpp>

#include <random>

#include "solve/lorentz_cone.h"

using namespace stagger;
using Eigen::Matrix3d;
using Eigen::Vector3d;

namespace {

// A point inside L at relative distance `depth` from its boundary, in a random direction.
Vector3d inside(std::mt19937& rng, double depth) {
  std::uniform_real_distribution<double> angle(0, 6.283185307179586), size(0.1, 10);
  const double r = size(rng), a = angle(rng);
  return Vector3d(r * (1 + depth), r * std::cos(a), r * std::sin(a));
}

}  // namespace

TEST_CASE("Nesterov-Todd scaling: W z = W^-1 s = lambda, and W^p are its powers", "[exact_ccp]") {
  std::mt19937 rng(7);
  for (double depth : {1.0, 1e-3, 1e-8}) {
    for (int trial = 0; trial < 50; ++trial) {
      const Vector3d s = inside(rng, depth), z = inside(rng, depth);
      const NtScaling w(s, z);
      CAPTURE(depth, trial);
      // W^-1 s = lambda = W z, to the precision the pair's own size allows.
      CHECK((w.apply(-1, s) - w.lambda).norm() <= 1e-9 * w.lambda.norm());
      // lambda is inside L, and lambda' lambda = s' z (the scaling keeps the duality gap).
      CHECK(lorentz_det(w.lambda) > 0);
      CHECK(w.lambda.squaredNorm() == Approx(s.dot(z)).epsilon(1e-9));
      // W^2 = W W and W^-1 W = I, applied.
      const Vector3d x(0.3, -1.2, 0.7);
      CHECK((w.apply(2, x) - w.apply(1, w.apply(1, x))).norm() <= 1e-12 * w.apply(2, x).norm());
      CHECK((w.apply(-1, w.apply(1, x)) - x).norm() <= 1e-9 * x.norm());
      // W is symmetric, and beta times a hyperbolic rotation: W J W = beta^2 J (what makes it the NT
      // scaling rather than any map with W z = W^-1 s), and lambda lies in L's upper half.
      const Matrix3d m = w.matrix(1), j = Vector3d(1, -1, -1).asDiagonal();
      CHECK((m - m.transpose()).norm() <= 1e-12 * m.norm());
      CHECK((m * j * m - w.beta * w.beta * j).norm() <= 1e-9 * (m * m).norm());
      CHECK(w.lambda[0] > 0);
    }
  }
}

TEST_CASE("Jordan division undoes the Jordan product inside the Lorentz cone", "[exact_ccp]") {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 100; ++trial) {
    // The division's condition grows as u nears the boundary: 1 / depth.
    const double depth = trial % 2 ? 1e-4 : 0.5;
    const Vector3d u = inside(rng, depth), v(normal(rng), normal(rng), normal(rng));
    const Vector3d d = jordan_product(u, v);
    CHECK((jordan_solve(u, d) - v).norm() <= 1e-13 / depth * v.norm());
  }
}

TEST_CASE("the step to the Lorentz cone's boundary lands on it and never leaves the cone", "[exact_ccp]") {
  std::mt19937 rng(13);
  std::normal_distribution<double> normal;
  int capped = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Vector3d s = inside(rng, 0.2), ds(normal(rng), 3 * normal(rng), 3 * normal(rng));
    const double t = step_to_boundary(s, ds, 1e6);
    REQUIRE(t > 0);
    if (t == 1e6) {
      ++capped;  // ds points into the cone: never leaves it
      CHECK(lorentz_det(s + 1e6 * ds) >= 0);
      CHECK((s + 1e6 * ds)[0] >= 0);
      continue;
    }
    // On the boundary at t, inside just before it, outside just after.
    const Vector3d at = s + t * ds;
    CHECK(std::fabs(lorentz_det(at)) <= 1e-9 * at.squaredNorm());
    CHECK(lorentz_det(s + 0.999 * t * ds) > 0);
    CHECK(lorentz_det(s + 1.001 * t * ds) < 0);
  }
  CHECK(capped > 0);  // both branches ran
  CHECK(capped < 200);
}
