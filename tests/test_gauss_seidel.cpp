// The Gauss-Seidel polish (kernels/gauss_seidel.h, host/solve/staggered_batched.h): a contact's local
// Coulomb problem is solved to its law, the disk QP to its minimum, the contact's Delassus block is the
// bodies' response, and on a densely coupled problem whose outer loop stalls the polish finishes it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/gauss_seidel.h"
#include "kernels/natural_map.h"
#include "helpers.h"
#include "problem_builders.h"
#include "solve/quality.h"
#include "solve/staggered.h"

using namespace stagger;
using namespace stagger::test;

namespace {

// |gamma - P_K(gamma - u~)| for one contact with rows u (normal, t1, t2): zero exactly when (gamma, u)
// obey Coulomb's law (SOLVER.md's natural map, De Saxce's shift mu |u_t| on the normal row).
double local_natural_map(Vec3d gamma, Vec3d u, double mu) {
  double a = gamma.x - (u.x + mu * std::hypot(u.y, u.z)), b1 = gamma.y - u.y, b2 = gamma.z - u.z;
  project_cone(a, b1, b2, mu);
  return std::sqrt(square(gamma.x - a) + square(gamma.y - b1) + square(gamma.z - b2));
}

Mat3<double> random_spd(std::mt19937_64& rng, bool couple_normal) {
  std::normal_distribution<double> g(0.0, 1.0);
  Mat3<double> a{{g(rng), g(rng), g(rng)}, {g(rng), g(rng), g(rng)}, {g(rng), g(rng), g(rng)}};
  Mat3<double> m = transpose(a) * a;
  m.r0.x += 0.5;
  m.r1.y += 0.5;
  m.r2.z += 0.5;
  if (!couple_normal) m.r0.y = m.r0.z = m.r1.x = m.r2.x = 0;
  return m;
}

}  // namespace

TEST_CASE("a contact's local Coulomb problem is solved to Coulomb's law", "[solver][gauss_seidel]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_real_distribution<double> friction(0.05, 1.5);
  int sliding = 0, sticking = 0, separating = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    // As for a sphere's contacts, no coupling of normal and tangent rows: exact in one pass. With a
    // weak coupling (a box's corner) the passes converge; with a strong one they are not promised to.
    const bool couple = trial % 2 == 1;
    Mat3<double> w = random_spd(rng, false);
    if (couple) {
      const double c = 0.1 * std::sqrt(w.r0.x * w.r1.y);
      w.r0.y = w.r1.x = c;
    }
    const Vec3d q{g(rng), g(rng), g(rng)};
    const double mu = friction(rng);
    double a = std::abs(g(rng)), b1 = g(rng), b2 = g(rng);  // any start
    local_coulomb(w, q, mu, a, b1, b2);
    const Vec3d gamma{a, b1, b2};
    const Vec3d u = w * gamma + q;
    CAPTURE(trial, mu, a, b1, b2, u.x, u.y, u.z);
    REQUIRE(a >= 0);
    REQUIRE(std::hypot(b1, b2) <= mu * a * (1 + 1e-12) + 1e-15);
    REQUIRE(local_natural_map(gamma, u, mu) <= 1e-9 * (1 + norm(q)));
    if (a == 0) ++separating;
    else if (std::hypot(b1, b2) < mu * a * (1 - 1e-9)) ++sticking;
    else ++sliding;
  }
  CHECK(sliding > 100);  // every branch of the law was exercised
  CHECK(sticking > 100);
  CHECK(separating > 100);
}

TEST_CASE("the disk QP finds the minimum over the disk", "[solver][gauss_seidel]") {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const Mat3<double> m = random_spd(rng, false);
    const double a11 = m.r1.y, a12 = m.r1.z, a22 = m.r2.z;
    const double r1 = g(rng), r2 = g(rng), radius = std::abs(g(rng)) * 0.3;
    auto f = [&](double x1, double x2) { return 0.5 * (a11 * x1 * x1 + 2 * a12 * x1 * x2 + a22 * x2 * x2) + r1 * x1 + r2 * x2; };
    double x1, x2;
    disk_qp(a11, a12, a22, r1, r2, radius, x1, x2);
    CAPTURE(trial, a11, a12, a22, r1, r2, radius, x1, x2);
    REQUIRE(std::hypot(x1, x2) <= radius * (1 + 1e-12));
    // No point of a fine polar grid over the disk does better.
    double best = f(0, 0);
    for (int i = 1; i <= 200; ++i)
      for (int j = 0; j < 360; ++j) {
        const double rho = radius * i / 200, phi = 2 * M_PI * j / 360;
        best = std::min(best, f(rho * std::cos(phi), rho * std::sin(phi)));
      }
    REQUIRE(f(x1, x2) <= best + 1e-12);
  }
}

TEST_CASE("an opening contact's local problem ends finite, and the disk QP takes vanishing radii", "[solver][gauss_seidel]") {
  // Met by Gauss-Seidel sweeps over the demo bed: a bead against a wall, q_n = 0, a normal-tangent
  // coupling of 1e-13. Each pass shrank a and b by sixteen decades until the disk QP's Newton steps
  // divided by a denormal radius and returned NaN.
  const Mat3<double> w{{763.94372684109771, 1.0601848938211977e-13, 1.6815581571898193e-45},
                       {1.0601848938211977e-13, 2673.8030439438453, 3.029225876048688e-29},
                       {1.2924697071141366e-30, 2.3283064365387002e-14, 2673.8030439438453}};
  const Vec3d q{0, 0.0020458698265213475, -2.574980159653073e-18};
  const double mu = 0.5;
  double a = 3.3579754049166516e-05, b1 = -1.2509334696856043e-06, b2 = -9.7442796243333947e-09;
  local_coulomb(w, q, mu, a, b1, b2);
  CAPTURE(a, b1, b2);
  REQUIRE(std::isfinite(a));
  REQUIRE(std::isfinite(b1));
  REQUIRE(std::isfinite(b2));
  REQUIRE(a >= 0);
  REQUIRE(std::hypot(b1, b2) <= mu * a * (1 + 1e-12) + 1e-300);
  REQUIRE(local_natural_map(Vec3d{a, b1, b2}, w * Vec3d{a, b1, b2} + q, mu) <= 1e-12 * norm(q));

  // Radii from ordinary down to denormal: inside the disk, finite, and no worse than the point of the
  // circle against r (the limit the small-radius branch returns).
  const double a11 = 2673.8, a12 = 3e-29, a22 = 2673.8, r1 = 0.002, r2 = -2.6e-18;
  auto f = [&](double x1, double x2) { return 0.5 * (a11 * x1 * x1 + 2 * a12 * x1 * x2 + a22 * x2 * x2) + r1 * x1 + r2 * x2; };
  for (double radius : {1e-7, 1e-12, 1e-20, 1e-100, 1e-300, 4e-320}) {
    double x1, x2;
    disk_qp(a11, a12, a22, r1, r2, radius, x1, x2);
    CAPTURE(radius, x1, x2);
    REQUIRE(std::isfinite(x1));
    REQUIRE(std::isfinite(x2));
    REQUIRE(std::hypot(x1, x2) <= radius * (1 + 1e-12));
    const double norm_r = std::hypot(r1, r2);
    REQUIRE(f(x1, x2) <= f(-radius * r1 / norm_r, -radius * r2 / norm_r) + 1e-12 * std::abs(f(-radius * r1 / norm_r, -radius * r2 / norm_r)));
  }
}

TEST_CASE("a contact's Delassus block is its bodies' velocity response", "[solver][gauss_seidel]") {
  // granular_problem's contacts between two spheres, and with the ground; rotations included.
  const ContactProblem p = granular_problem(30, 60, 3);
  const ProblemView<double> view = p.view();
  for (int k = 0; k < p.num_contacts(); ++k) {
    const Mat3<double> w = contact_delassus_block(view, k);
    const Vec3d dirs[3] = {p.normal[k], p.tangent1[k], p.tangent2[k]};
    for (int j = 0; j < 3; ++j) {
      // A unit impulse along d_j on A (and its opposite on B): the change of the contact's velocity.
      std::vector<Vec3d> v(p.num_bodies(), Vec3d{0, 0, 0}), w_body(p.num_bodies(), Vec3d{0, 0, 0});
      const int a = p.slot_a[k], b = p.slot_b[k];
      if (a >= 0) {
        v[a] = p.inv_mass[a] * dirs[j];
        w_body[a] = p.inv_inertia[a] * cross(p.r_a[k], dirs[j]);
      }
      if (b >= 0) {
        v[b] = -p.inv_mass[b] * dirs[j];
        w_body[b] = -(p.inv_inertia[b] * cross(p.r_b[k], dirs[j]));
      }
      ProblemView<double> still = view;
      std::vector<Vec3d> none(p.num_contacts(), Vec3d{0, 0, 0});
      still.w_known = none.data();
      const Vec3d response = contact_velocity(still, k, v.data(), w_body.data());
      const Vec3d column = w.col(j);
      CAPTURE(k, j);
      REQUIRE(norm(response - column) <= 1e-12 * norm(column));
    }
  }
}

TEST_CASE("the polish finishes an outer loop that stalls on a densely coupled problem", "[solver][gauss_seidel]") {
  // 600 contacts among 200 spheres drawn at random (three per body, as in a pile): the Tresca fixed
  // point's error stops improving before 1e-8 and takes about a hundred outer iterations to get
  // there; the Gauss-Seidel sweeps that race it from outer iteration 50 get there first.
  const ContactProblem p = granular_problem(200, 600, 5);
  const SolverSettings s = tresca_to(1e-8, 1000);
  SolveControls with = test_controls(), without = test_controls();
  without.polish = false;
  const SolveResult polished = BatchedSolver{}.solve(p, s, with);
  const SolveResult plain = BatchedSolver{}.solve(p, s, without);
  REQUIRE(polished.islands[0].converged);
  REQUIRE(measured_natural_map_error(p, polished) <= s.tolerance * 1.01);  // from the impulses, not the solver
  CHECK(polished.islands[0].sweeps > 0);
  CHECK(plain.islands[0].sweeps == 0);
  CHECK(polished.islands[0].outer_iterations < plain.islands[0].outer_iterations);
  // The polish starts at outer iteration 50: the polished solve cannot have ended before it.
  CHECK(polished.islands[0].outer_iterations >= 50);
}

TEST_CASE("at the default outer budget the polish changes nothing, even where the loop stalls", "[solver][gauss_seidel]") {
  // The stalling problem above with max_outer_iterations 50, the default: islands may enter the polish
  // after the last outer iteration but never sweep, so the answer is the outer loop's bit for bit.
  const ContactProblem p = granular_problem(200, 600, 5);
  const SolverSettings s = tresca_to(1e-8, SolverSettings{}.max_outer_iterations);
  REQUIRE(s.max_outer_iterations == 50);
  SolveControls with = test_controls(), without = test_controls();
  without.polish = false;
  const SolveResult a = BatchedSolver{}.solve(p, s, with);
  const SolveResult b = BatchedSolver{}.solve(p, s, without);
  REQUIRE_FALSE(a.islands[0].converged);  // it stalls: the case where start_polish runs
  CHECK(a.islands[0].sweeps == 0);
  REQUIRE(a.alpha == b.alpha);
  REQUIRE(a.beta == b.beta);
  double velocity_difference = 0;
  for (size_t i = 0; i < a.v.size(); ++i)
    velocity_difference = std::max({velocity_difference, norm(a.v[i] - b.v[i]), norm(a.w[i] - b.w[i])});
  REQUIRE(velocity_difference == 0.0);
  REQUIRE(a.islands[0].error == b.islands[0].error);
}

TEST_CASE("the polish leaves solves that meet their tolerance within the default outer budget alone",
          "[solver][gauss_seidel]") {
  // Simulation steps: an island that converges within 50 outer iterations (the default budget) never
  // sweeps, so its impulses are those of the outer loop bit for bit.
  const ContactProblem p = granular_problem(750, 1500, 1);
  SolverSettings s;
  s.method = Method::tresca_fixed_point;
  s.tolerance = 1e-4;
  s.tolerance_set = true;
  SolveControls with = test_controls(), without = test_controls();
  without.polish = false;
  const SolveResult a = BatchedSolver{}.solve(p, s, with);
  const SolveResult b = BatchedSolver{}.solve(p, s, without);
  REQUIRE(a.islands[0].converged);
  CHECK(a.islands[0].outer_iterations < 50);
  CHECK(a.islands[0].sweeps == 0);
  REQUIRE(a.alpha == b.alpha);
  REQUIRE(a.beta == b.beta);
}
