// The exact solve of small islands (host/solve/exact_ccp.h): on problems whose answer mechanics gives
// in closed form (a box resting on four redundant corner contacts, a block sticking on a slope, a block
// sliding down one) it finds that answer, and it declines islands it cannot take; a stalled outer
// loop hands its island over early, unless the scene turns the exact solve off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "helpers.h"
#include "solve/exact_ccp.h"

using namespace stagger;
using namespace stagger::test;

namespace {

constexpr double kG = 9.81, kH = 1e-3;

// A box of mass m (half extents e) on a fixed plane tilted by `slope` about the y axis, touching it at
// its four lower corners; the box has fallen for one step (its predictor velocity is h g, along the
// world's -z), so each contact's free velocity rows are h g projected on its frame.
struct BoxOnSlope {
  std::vector<ExactContact> contacts;
  std::vector<ExactBody> bodies;
  double mass, slope;
  double n[3], down_slope[3];  // the plane's normal and the direction down the slope

  BoxOnSlope(double slope_, double mu) : mass(2.0), slope(slope_) {
    const double ex = 0.1, ey = 0.05, ez = 0.05;
    const double c = std::cos(slope), s = std::sin(slope);
    // The plane's frame: normal (s, 0, c) points into the box; down the slope (c, 0, -s) (x grows down).
    const double nn[3] = {s, 0, c}, t1[3] = {c, 0, -s}, t2[3] = {0, 1, 0};
    for (int i = 0; i < 3; ++i) {
      n[i] = nn[i];
      down_slope[i] = t1[i];
    }
    const double gravity_step[3] = {0, 0, -kG * kH};  // the predictor's velocity
    ExactBody body;
    body.inv_mass = 1 / mass;
    const double ix = mass * (ey * ey + ez * ez) / 3, iy = mass * (ex * ex + ez * ez) / 3, iz = mass * (ex * ex + ey * ey) / 3;
    // The inertia about the slope's frame equals the box's own (the box is aligned with the slope);
    // in world coordinates it turns with the slope about y.
    const double r[3][3] = {{c, 0, s}, {0, 1, 0}, {-s, 0, c}};  // box axes -> world
    const double inv_diag[3] = {1 / ix, 1 / iy, 1 / iz};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double sum = 0;
        for (int k = 0; k < 3; ++k) sum += r[i][k] * inv_diag[k] * r[j][k];
        body.inv_inertia[3 * i + j] = sum;
      }
    bodies.push_back(body);
    for (int corner = 0; corner < 4; ++corner) {
      const double local[3] = {corner & 1 ? ex : -ex, corner & 2 ? ey : -ey, -ez};
      ExactContact k;
      k.a = 0;
      k.b = -1;
      for (int i = 0; i < 3; ++i) {
        k.n[i] = nn[i];
        k.t1[i] = t1[i];
        k.t2[i] = t2[i];
        k.ra[i] = r[i][0] * local[0] + r[i][1] * local[1] + r[i][2] * local[2];
        k.rb[i] = 0;
      }
      k.mu = mu;
      k.q[0] = dot(nn, gravity_step);
      k.q[1] = dot(t1, gravity_step);
      k.q[2] = dot(t2, gravity_step);
      contacts.push_back(k);
    }
  }
  static double dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

  // The box's velocity after the impulses x (3 per contact): h g + (sum of impulses) / m.
  void velocity(const std::vector<double>& x, double v[3]) const {
    for (int i = 0; i < 3; ++i) v[i] = i == 2 ? -kG * kH : 0.0;
    for (size_t k = 0; k < contacts.size(); ++k)
      for (int i = 0; i < 3; ++i)
        v[i] += (x[3 * k] * contacts[k].n[i] + x[3 * k + 1] * contacts[k].t1[i] + x[3 * k + 2] * contacts[k].t2[i]) / mass;
  }
};

ExactCcpSettings settings_for(double tolerance) {
  ExactCcpSettings s;
  s.tolerance = tolerance;
  s.scale = 1 / (kG * kH * 2);  // |b| of four contacts' rows: h g times sqrt(4)
  return s;
}

// The box's exact solve to `tolerance`, which must meet it, with the sums of its contacts' impulses
// (normal, along the slope's first tangent, friction magnitudes) and its velocity after them.
struct Solved {
  ExactCcpResult result;
  std::vector<double> x;
  double normal = 0, along = 0, friction = 0, v[3];
};
Solved solve(const BoxOnSlope& box, double tolerance) {
  Solved s;
  s.result = solve_exact_ccp(box.contacts, box.bodies, settings_for(tolerance), s.x);
  REQUIRE(s.result.solved);
  CAPTURE(s.result.error, s.result.newton, s.result.solves);
  CHECK(s.result.error <= tolerance);
  for (int k = 0; k < 4; ++k) {
    CHECK(s.x[3 * k] >= 0);
    s.normal += s.x[3 * k];
    s.along += s.x[3 * k + 1];
    s.friction += std::hypot(s.x[3 * k + 1], s.x[3 * k + 2]);
  }
  box.velocity(s.x, s.v);
  return s;
}
double norm3(const double* v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

}  // namespace

TEST_CASE("exact solve: a box on four redundant corner contacts carries its weight and stays at rest", "[exact_ccp]") {
  // Twelve unknowns, six velocities: the corners' share of the weight is not unique, their sum and the
  // box's rest are.
  BoxOnSlope box(0.0, 0.5);
  const Solved s = solve(box, 1e-9);
  CHECK(s.normal == Approx(box.mass * kG * kH).epsilon(1e-7));
  CHECK(s.friction < 1e-9 * s.normal);
  CHECK(norm3(s.v) < 1e-9);
}

TEST_CASE("exact solve: a box on a slope gentler than its friction angle sticks", "[exact_ccp]") {
  const double slope = 0.3;  // tan = 0.31 < mu = 0.6
  BoxOnSlope box(slope, 0.6);
  const Solved s = solve(box, 1e-9);
  // The contacts take the step's weight: m g h cos(slope) against the plane, m g h sin(slope) up it.
  CHECK(s.normal == Approx(box.mass * kG * kH * std::cos(slope)).epsilon(1e-7));
  CHECK(s.along == Approx(-box.mass * kG * kH * std::sin(slope)).epsilon(1e-7));
  CHECK(norm3(s.v) < 1e-9);
}

TEST_CASE("exact solve: a box on a slope steeper than its friction slides with the Coulomb force", "[exact_ccp]") {
  // The relaxed problem alone would lift the sliding box off (normal velocity mu |v_t|); successive
  // relaxation removes that, and the box slides at h g (sin - mu cos) after the step.
  const double slope = 0.6, mu = 0.3;  // tan = 0.68 > mu
  BoxOnSlope box(slope, mu);
  const Solved s = solve(box, 1e-8);
  CHECK(s.result.solves >= 2);
  const double along = BoxOnSlope::dot(s.v, box.down_slope), off = BoxOnSlope::dot(s.v, box.n);
  CHECK(along == Approx(kG * kH * (std::sin(slope) - mu * std::cos(slope))).epsilon(1e-5));
  CHECK(std::fabs(off) < 1e-7 * kG * kH);
  CHECK(s.along == Approx(-mu * s.normal).epsilon(1e-5));
}

TEST_CASE("exact solve: the outer loop's answer gives a sliding box its first shift, not a sticking one", "[exact_ccp]") {
  // Sliding: the shift-free relaxed answer lifts the box off, and successive relaxation walks the shift
  // to mu |v_t| from there. An outer loop's answer near the Coulomb one (here the exact answer, off by
  // 0.1%) has the smaller Coulomb error, so the shift is taken from it: fewer relaxations, same answer.
  BoxOnSlope sliding(0.6, 0.3);
  const Solved cold = solve(sliding, 1e-8);
  REQUIRE(cold.result.solves >= 3);
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < 3; ++r) sliding.contacts[k].start[r] = 1.001 * cold.x[3 * k + r];
  const Solved started = solve(sliding, 1e-8);
  CHECK(started.result.solves < cold.result.solves);
  CHECK(BoxOnSlope::dot(started.v, sliding.down_slope) == Approx(BoxOnSlope::dot(cold.v, sliding.down_slope)).epsilon(1e-5));
  // Sticking: the shift-free relaxed answer is the Coulomb answer, whatever the outer loop left (here
  // the weight on the normal rows and no friction: a box that would slide).
  BoxOnSlope sticking(0.3, 0.6);
  for (ExactContact& k : sticking.contacts) k.start[0] = sticking.mass * kG * kH / 4;
  const Solved stuck = solve(sticking, 1e-9);
  CHECK(stuck.result.solves == 1);
  CHECK(norm3(stuck.v) < 1e-9);
}

TEST_CASE("exact solve: islands it cannot take are declined, not solved wrongly", "[exact_ccp]") {
  BoxOnSlope frictionless(0.0, 0.0);  // the cone's coordinates divide by mu: mu > 0
  std::vector<double> x;
  CHECK_FALSE(exact_ccp_applies(frictionless.contacts, 1));
  CHECK_FALSE(solve_exact_ccp(frictionless.contacts, frictionless.bodies, settings_for(1e-6), x).solved);
  BoxOnSlope box(0.0, 0.5);
  CHECK_FALSE(exact_ccp_applies(box.contacts, kExactMaxRows / 6 + 1));  // too many bodies for its system
  CHECK(exact_ccp_applies(box.contacts, 1));
}

TEST_CASE("a small structure whose outer loop stalls goes to the exact solve early, and still stands", "[exact_ccp][world]") {
  // Ten boxes stacked on a 3 degree slope: the staggered loop cycles between errors of 1.5e-4 and 5e-4
  // on every other step and never meets 1e-4 (docs/method.md, "The exact solve of small islands").
  // Handed to the exact solve once its best error has not halved over a window of 10 outer
  // iterations, not after all 50: every step still converges, in far fewer outer iterations.
  Scene scene = validation_scene("box_stack");
  const double g = norm(scene.gravity), tilt = 3 * M_PI / 180;
  scene.gravity = {g * std::sin(tilt), 0, -g * std::cos(tilt)};
  long long outer[2] = {0, 0};
  for (int window : {0, 10}) {
    CAPTURE(window);
    WorldOptions options;
    options.controls.exact_stall_window = window;
    World world(scene, options);
    const std::vector<Vec3d> start = world.bodies().x;
    int most = 0;
    for (int s = 0; s < 300; ++s) {
      world.step();
      REQUIRE(world.last_step().converged);
      outer[window > 0] += world.last_step().outer_iterations;
      most = std::max(most, world.last_step().outer_iterations_max);
    }
    if (window == 0) CHECK(most == scene.solver.max_outer_iterations);  // the loop stalls: its whole budget
    for (int i = 0; i < world.bodies().size(); ++i)
      if (world.bodies().is_dynamic(i)) CHECK(norm(world.bodies().x[i] - start[i]) < 1e-5);
  }
  CAPTURE(outer[0], outer[1]);
  CHECK(outer[1] < 0.6 * outer[0]);
}

TEST_CASE("a scene can turn the exact solve off: the stalled stack's steps then end unconverged", "[exact_ccp][world]") {
  // The tilted stack above, with "exact_small_islands": false in its solver block: no island goes to the
  // exact solve, so, with the Tresca switch off as well (tests/test_tresca_switch.cpp has it on), the
  // steps on which the staggered loop cycles end at its outer budget, unconverged and reported so. The scene's own file, through the loader, so that the key is what turns it off.
  const std::string file = std::string(STAGGER_SOURCE_DIR) + "/scenes/validation/box_stack.json";
  nlohmann::json j = nlohmann::json::parse(read_scene_text(file), nullptr, true, /*ignore_comments=*/true);
  const double g = 9.81, tilt = 3 * M_PI / 180;
  j["gravity"] = {g * std::sin(tilt), 0, -g * std::cos(tilt)};
  for (bool exact : {true, false}) {
    CAPTURE(exact);
    j["solver"]["exact_small_islands"] = exact;
    Scene scene = parse_scene(j.dump(), file);
    REQUIRE(scene.solver.exact_small_islands == exact);
    WorldOptions options;
    options.controls.tresca_switch_window = 0;  // else the stalled island goes on by the Tresca fixed point
    World world(scene, options);
    int unconverged = 0, most = 0;
    for (int s = 0; s < 100; ++s) {
      world.step();
      unconverged += world.last_step().converged ? 0 : 1;
      most = std::max(most, world.last_step().outer_iterations_max);
    }
    if (exact) {
      CHECK(unconverged == 0);
    } else {
      CHECK(unconverged > 10);
      CHECK(most == scene.solver.max_outer_iterations);
    }
  }
  // A value that is not a boolean is refused at its path.
  j["solver"]["exact_small_islands"] = 1;
  try {
    parse_scene(j.dump(), file);
    FAIL("a number was taken for exact_small_islands");
  } catch (const SceneError& e) {
    CHECK(e.path == "solver.exact_small_islands");
    CHECK_THAT(e.what(), Catch::Contains("true or false"));
  }
}
