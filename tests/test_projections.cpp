// Each projection satisfies its optimality conditions on random inputs: the result is feasible and
// x - P(x) makes an obtuse angle with every direction into the set (for cones: Moreau's
// decomposition, x - P(x) in the polar cone and orthogonal to P(x)).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "kernels/projections.h"

using namespace stagger;

namespace {
std::mt19937_64 rng(12345);
double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
constexpr double kTol = 1e-12;
}  // namespace

TEST_CASE("half-line projection is max(0, x)", "[projections]") {
  for (int t = 0; t < 1000; ++t) {
    double x = uniform(-5, 5), y = project_half_line(x);
    REQUIRE(y >= 0);
    REQUIRE((x - y) * (0 - y) <= kTol);  // z = 0 and z -> infinity span the half-line
    REQUIRE((x - y) <= kTol);
  }
}

TEST_CASE("disk projection satisfies the variational inequality", "[projections]") {
  for (int t = 0; t < 2000; ++t) {
    double x1 = uniform(-3, 3), x2 = uniform(-3, 3), r = t % 10 == 0 ? 0.0 : uniform(0, 2);
    double y1 = x1, y2 = x2;
    project_disk(y1, y2, r);
    REQUIRE(std::hypot(y1, y2) <= r + kTol);
    // max over the disk of (x - y).(z - y) = r |x - y| - (x - y).y must be <= 0
    double d1 = x1 - y1, d2 = x2 - y2;
    REQUIRE(r * std::hypot(d1, d2) - (d1 * y1 + d2 * y2) <= 1e-10);
  }
}

TEST_CASE("scaled simplex projection satisfies the variational inequality", "[projections]") {
  for (int t = 0; t < 2000; ++t) {
    int m = 1 + int(rng() % 12);
    double r = t % 10 == 0 ? 0.0 : uniform(0, 2);
    std::vector<double> x(m), y(m);
    for (int j = 0; j < m; ++j) y[j] = x[j] = uniform(-2, 2);
    project_scaled_simplex(y.data(), m, r);
    double sum = 0;
    for (double v : y) {
      REQUIRE(v >= 0);
      sum += v;
    }
    REQUIRE(sum <= r + 1e-12);
    // The set is a polytope with vertices 0 and r e_j: the inequality at the vertices suffices.
    auto vi = [&](const std::vector<double>& z) {
      double s = 0;
      for (int j = 0; j < m; ++j) s += (x[j] - y[j]) * (z[j] - y[j]);
      return s;
    };
    std::vector<double> z(m, 0.0);
    REQUIRE(vi(z) <= 1e-10);
    for (int j = 0; j < m; ++j) {
      std::fill(z.begin(), z.end(), 0.0);
      z[j] = r;
      REQUIRE(vi(z) <= 1e-10);
    }
  }
}

TEST_CASE("second-order cone projection is Moreau's decomposition", "[projections]") {
  for (int t = 0; t < 2000; ++t) {
    double mu = t % 10 == 0 ? 0.0 : uniform(0.05, 2.0);
    double a = uniform(-3, 3), b1 = uniform(-3, 3), b2 = uniform(-3, 3);
    double pa = a, p1 = b1, p2 = b2;
    project_cone(pa, p1, p2, mu);
    REQUIRE(std::hypot(p1, p2) <= mu * pa + 1e-12);  // feasible
    double da = a - pa, d1 = b1 - p1, d2 = b2 - p2;
    REQUIRE(std::fabs(pa * da + p1 * d1 + p2 * d2) <= 1e-10);  // orthogonal
    // x - P(x) in the polar cone: -(x - P(x)) in the dual cone {|b| <= a / mu} (mu = 0: a-axis only)
    if (mu > 0) REQUIRE(std::hypot(d1, d2) * mu <= -da + 1e-10);
    else REQUIRE(da <= 1e-12);
  }
}

TEST_CASE("pyramid cone projection is Moreau's decomposition", "[projections]") {
  for (int t = 0; t < 2000; ++t) {
    int m = 3 + int(rng() % 10);
    double mu = t % 10 == 0 ? 0.0 : uniform(0.05, 2.0);
    double a = uniform(-3, 3);
    std::vector<double> b(m), pb(m);
    for (int j = 0; j < m; ++j) pb[j] = b[j] = uniform(-3, 3);
    double pa = a;
    project_pyramid_cone(pa, pb.data(), m, mu);
    double sum = 0, ortho = pa * (a - pa);
    for (int j = 0; j < m; ++j) {
      REQUIRE(pb[j] >= 0);
      sum += pb[j];
      ortho += pb[j] * (b[j] - pb[j]);
    }
    REQUIRE(sum <= mu * pa + 1e-10);
    REQUIRE(std::fabs(ortho) <= 1e-10);
    // Generators of the cone: (1, 0) and (1, mu e_j); x - P(x) must have a non-positive inner
    // product with each (and with (0, e_j) when mu = 0, where the cone is the a-axis... only
    // b = 0 is allowed then, so the b-part of x - P(x) is unconstrained).
    REQUIRE(a - pa <= 1e-10);
    if (mu > 0)
      for (int j = 0; j < m; ++j) REQUIRE((a - pa) + mu * (b[j] - pb[j]) <= 1e-10);
  }
}
