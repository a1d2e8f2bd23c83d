// Compliant contacts (kernels/problem_assembly.h, make_compliant): a spring-dashpot in the
// complementarity problem. Checked against closed forms and an independent integration of the
// spring-dashpot's equation of motion, and for zero compliance against the rigid model bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

namespace {

constexpr double kG = 9.81;

// A ball of mass m and radius 0.1 m resting on a plane; `floor` and `ball` are extra JSON fields.
Scene resting_ball(double m, const std::string& floor, const std::string& ball, double seconds = 2.0) {
  return parse_scene(fmt::format(R"({{"time_step": 0.001, "duration": {}, "bodies": [
      {{"id": "floor", "shape": {{"type": "plane"}}, "fixed": true {}}},
      {{"id": "ball", "shape": {{"type": "sphere", "radius": 0.1}}, "position": [0, 0, 0.1], "mass": {} {}}}]}})",
                                 seconds, floor, m, ball),
                     "resting_ball.json");
}

// The spring-dashpot's impact without tension (the force max(0, -k x - d x') stops at zero): the
// rebound speed ratio and the time the force acts, by symplectic Euler with a step 1/10,000 of it.
struct Rebound {
  double restitution, duration;
};
Rebound spring_dashpot_impact(double k, double zeta, double m, double v0) {
  const double d = 2 * zeta * std::sqrt(k * m), dt = 1e-4 * M_PI * std::sqrt(m / k);
  double x = 0, v = -v0, t = 0;
  while (true) {
    const double f = std::max(0.0, -k * x - d * v);
    v += f / m * dt;
    x += v * dt;
    t += dt;
    if (x > 0 || (f == 0 && v > 0)) return {v / v0, t};
  }
}

}  // namespace

TEST_CASE("a sphere on a compliant floor sinks by m g / k, and two springs in series by m g (1/k1 + 1/k2)",
          "[compliance]") {
  for (double k : {1e4, 1e5, 1e6}) {
    CAPTURE(k);
    const std::string floor = fmt::format(R"(, "stiffness": {}, "damping_ratio": 1)", k);
    CHECK(ball_overlap_at_rest(resting_ball(2.0, floor, "")) == Approx(2.0 * kG / k).epsilon(1e-4));
  }
  // The ball's spring in series with the floor's; the damping ratio is the larger one.
  const double series = ball_overlap_at_rest(resting_ball(2.0, R"(, "stiffness": 2e5, "damping_ratio": 0.2)",
                                                     R"(, "stiffness": 5e4, "damping_ratio": 1)"));
  CHECK(series == Approx(2.0 * kG * (1 / 2e5 + 1 / 5e4)).epsilon(1e-4));
  // The same on the reference backend (its own Delassus matrix) and on the resident step's CPU twin.
  WorldOptions reference;
  reference.backend = SolverBackend::reference;
  WorldOptions resident;
  resident.resident = true;
  const Scene compliant = resting_ball(2.0, R"(, "stiffness": 1e5, "damping_ratio": 1)", "", 0.5);
  CHECK(ball_overlap_at_rest(compliant, reference) == Approx(2.0 * kG / 1e5).epsilon(1e-4));
  CHECK(ball_overlap_at_rest(compliant, resident) == Approx(2.0 * kG / 1e5).epsilon(1e-4));
}

TEST_CASE("a resolved compliant impact rebounds with the spring-dashpot's restitution and contact time",
          "[compliance]") {
  // 10 g ball, k = 1e3 N/m: the contact lasts about 10 ms, 500 steps of 2e-5 s.
  const double k = 1e3, m = 0.01, v0 = 1.0, h = 2e-5;
  for (double zeta : {0.0, 0.1, 0.5}) {
    CAPTURE(zeta);
    const Scene scene = parse_scene(fmt::format(R"({{"time_step": {}, "steps": 1, "gravity": [0, 0, 0], "bodies": [
        {{"id": "floor", "shape": {{"type": "plane"}}, "fixed": true}},
        {{"id": "ball", "shape": {{"type": "sphere", "radius": 0.01}}, "position": [0, 0, 0.0101],
          "velocity": [0, 0, {}], "mass": {}, "stiffness": {}, "damping_ratio": {}}}]}})",
                                                h, -v0, m, k, zeta),
                                    "impact.json");
    World world(scene);
    int pushing = 0;  // steps with a positive normal impulse
    for (int s = 0; s < 5000; ++s) {
      world.step();
      const bool push = !world.solution().alpha.empty() && world.solution().alpha[0] > 0;
      if (push) ++pushing;
      else if (pushing > 0) break;
    }
    const Rebound expected = spring_dashpot_impact(k, zeta, m, v0);
    const double rebound = world.bodies().v[body_index(world, "ball")].z / v0;
    // Implicit Euler damps a little more than the exact motion: 1% of the restitution at 470 steps per
    // contact. The restitution of the scene ("restitution": 0 here) does not apply to a compliant contact.
    CHECK(rebound == Approx(expected.restitution).margin(0.012));
    CHECK(pushing * h == Approx(expected.duration).epsilon(0.01));
  }
}

TEST_CASE("a contact without compliance is the rigid one bit for bit, beside compliant bodies", "[compliance]") {
  // The Brazil-nut bed with a ball high above the bed that touches nothing, rigid in one world and compliant in
  // the other: every contact of the bed then runs through the compliant code with epsilon = 0, which
  // must change no bit.
  Scene rigid = load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/brazil_nut_small.json");
  BodyDesc far = rigid.bodies.back();
  far.id = "far_ball";
  far.position = {0, 0, 5};  // above the bed, inside the walls (planes: a ball outside one would overlap it)
  rigid.bodies.push_back(far);
  Scene mixed = rigid;
  mixed.bodies.back().stiffness = 1e4;
  mixed.bodies.back().damping_ratio = 0.3;
  // And with a tangential spring on the far ball: the bed's contacts then also run through the
  // tangential code with epsilon_t = 0, and the warm-start cache carries the springs.
  Scene tangential = mixed;
  tangential.bodies.back().tangential_stiffness = 1e4;
  for (const auto& [resident, compliant] : {std::pair<bool, const Scene*>{false, &mixed}, {true, &mixed},
                                            {false, &tangential}, {true, &tangential}}) {
    CAPTURE(resident, compliant == &tangential);
    WorldOptions options;
    options.resident = resident;
    World a(rigid, options), b(*compliant, options);
    REQUIRE(b.bodies().compliant);
    REQUIRE(b.bodies().tangential == (compliant == &tangential));
    for (int s = 0; s < 200; ++s) {
      a.step();
      b.step();
    }
    int differing = 0;
    for (int i = 0; i < a.bodies().size(); ++i)
      differing += a.bodies().x[i].x != b.bodies().x[i].x || a.bodies().x[i].z != b.bodies().x[i].z ||
                   a.bodies().v[i].z != b.bodies().v[i].z;
    CHECK(differing == 0);
  }
}

TEST_CASE("the scene loader refuses bad compliance", "[compliance]") {
  auto error_of = [](const std::string& fields) -> std::string {
    try {
      resting_ball(1.0, "", fields);
    } catch (const SceneError& e) {
      return e.path + ": " + e.what();
    }
    return "";
  };
  CHECK_THAT(error_of(R"(, "stiffness": 0)"), Catch::Contains("bodies[1].stiffness"));
  CHECK_THAT(error_of(R"(, "stiffness": -5)"), Catch::Contains("bodies[1].stiffness"));
  CHECK_THAT(error_of(R"(, "stiffness": "soft")"), Catch::Contains("bodies[1].stiffness"));
  CHECK_THAT(error_of(R"(, "damping_ratio": 0.5)"), Catch::Contains("needs a \"stiffness\""));
  CHECK_THAT(error_of(R"(, "stiffness": 1e5, "damping_ratio": -1)"), Catch::Contains("bodies[1].damping_ratio"));
  CHECK(error_of(R"(, "stiffness": 1e5, "damping_ratio": 0.5)").empty());
}
