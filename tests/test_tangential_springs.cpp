// Tangential springs (kernels/problem_assembly.h, make_compliant; "tangential_stiffness"): the friction
// impulse of a sticking contact grows by h^2 k_t times its tangential velocity from the previous step's,
// inside the friction cone. Checked against closed forms (static deflection, oscillation frequency,
// sliding beyond the cone) and between the backends; tests/test_compliance.cpp checks that contacts
// without them keep the rigid tangent bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>

#include "helpers.h"
#include "problem_builders.h"
#include "solve/reference/staggered_reference.h"
#include "solve/staggered.h"

using namespace stagger;
using namespace stagger::test;

namespace {

constexpr double kG = 9.81;

// A 1 kg plate, 0.2 x 0.2 x 0.02 m (four corner contacts), resting on a floor with normal stiffness 1e7
// N/m and tangential stiffness `kt` (0: none), gravity tilted sideways by `gx`, a first velocity `vx`.
// The plate is thin, so that tilting on the normal springs moves it by less than 1e-4 of the sideways
// deflection.
Scene plate_on_floor(double kt, double gx, double vx, double mu, double h, double seconds) {
  const std::string tangential = kt > 0 ? fmt::format(R"(, "tangential_stiffness": {})", kt) : "";
  return parse_scene(fmt::format(R"({{"time_step": {}, "duration": {}, "gravity": [{}, 0, {}],
      "solver": {{"method": "staggered", "tolerance": 1e-9}},
      "bodies": [
      {{"id": "floor", "shape": {{"type": "plane"}}, "fixed": true, "friction": {},
        "stiffness": 1e7, "damping_ratio": 1 {}}},
      {{"id": "plate", "shape": {{"type": "box", "half_extents": [0.1, 0.1, 0.01]}}, "position": [0, 0, 0.01],
        "velocity": [{}, 0, 0], "mass": 1, "friction": {}}}]}})",
                                 h, seconds, gx, -kG, mu, tangential, vx, mu),
                     "plate.json");
}

}  // namespace

TEST_CASE("a plate on a floor with tangential springs deflects by F / k_t under a sideways load",
          "[compliance][tangential]") {
  const double kt = 1e5, gx = 1.0;  // 1 N sideways, 4 springs in parallel: 2.5 um
  WorldOptions reference, resident;
  reference.backend = SolverBackend::reference;
  resident.resident = true;
  for (const auto& [name, options] : {std::pair<const char*, WorldOptions>{"batched", WorldOptions{}},
                                      {"reference", reference},
                                      {"resident", resident}}) {
    CAPTURE(name);
    World world(plate_on_floor(kt, gx, 0.0, 0.5, 1e-3, 1.0), options);
    for (std::int64_t s = 0; s < world.scene().steps; ++s) world.step();
    const int plate = body_index(world, "plate");
    CHECK(world.bodies().x[plate].x == Approx(gx / (4 * kt)).epsilon(1e-3));
    CHECK(std::abs(world.bodies().v[plate].x) < 1e-8);
  }
  // Without tangential springs the plate sticks where it stands.
  World rigid(plate_on_floor(0, gx, 0.0, 0.5, 1e-3, 1.0));
  for (std::int64_t s = 0; s < rigid.scene().steps; ++s) rigid.step();
  CHECK(std::abs(rigid.bodies().x[body_index(rigid, "plate")].x) < 1e-9);
}

TEST_CASE("a plate kicked sideways on tangential springs oscillates at sqrt(4 k_t / m)", "[compliance][tangential]") {
  // omega = sqrt(4e4) = 200 rad/s, a period of 31.4 ms: 157 steps of 2e-4 s. Implicit Euler turns by
  // atan(omega h) per step instead of omega h (0.05% slower here) and damps the swing, which keeps
  // crossing zero. Friction high enough that the plate sticks.
  const double kt = 1e4, omega = std::sqrt(4 * kt / 1.0), h = 2e-4;
  World world(plate_on_floor(kt, 0.0, 0.01, 2.0, h, 0.2));
  const int plate = body_index(world, "plate");
  std::vector<double> crossings;  // times at which the velocity changes sign, interpolated
  double v_prev = world.bodies().v[plate].x, t = 0;
  for (std::int64_t s = 0; s < world.scene().steps; ++s) {
    world.step();
    t += h;
    const double v = world.bodies().v[plate].x;
    if ((v < 0) != (v_prev < 0)) crossings.push_back(t - h * v / (v - v_prev));
    v_prev = v;
  }
  REQUIRE(crossings.size() >= 8);
  const double half_period = (crossings.back() - crossings.front()) / double(crossings.size() - 1);
  CHECK(half_period == Approx(M_PI / omega).epsilon(0.01));
  // The swing's amplitude is that of the kick, v0 / omega, at the first turn (within the step's damping).
  const double amplitude = 0.01 / omega;
  World first(plate_on_floor(kt, 0.0, 0.01, 2.0, h, 0.2));
  double reach = 0;
  for (int s = 0; s < 80; ++s) {
    first.step();
    reach = std::max(reach, first.bodies().x[plate].x);
  }
  CHECK(reach == Approx(amplitude).epsilon(0.1));
}

TEST_CASE("beyond the friction cone a plate on tangential springs slides with a = g_x - mu g", "[compliance][tangential]") {
  const double gx = 8.0, mu = 0.5;  // mu g = 4.905
  World world(plate_on_floor(1e5, gx, 0.0, mu, 1e-3, 0.5));
  const int plate = body_index(world, "plate");
  double v_at_quarter = 0;
  for (std::int64_t s = 0; s < world.scene().steps; ++s) {
    world.step();
    if (s + 1 == world.scene().steps / 2) v_at_quarter = world.bodies().v[plate].x;
  }
  const double a = (world.bodies().v[plate].x - v_at_quarter) / 0.25;
  CHECK(a == Approx(gx - mu * kG).epsilon(1e-3));
}

TEST_CASE("with normal and tangential springs the batched backend equals the Eigen reference", "[compliance][tangential][equivalence]") {
  // Random island problems given an epsilon on every row (half the row's Delassus diagonal) and a
  // previous friction impulse: both backends solve the same regularized Coulomb problem, and a contact
  // that pushes, strictly inside its cone, sticks: v_t + epsilon_t (beta_t - beta_prev) = 0.
  int sticking_total = 0;
  for (auto model : {FrictionModel::cone, FrictionModel::pyramid}) {
    for (auto method : {Method::staggered, Method::tresca_fixed_point}) {
      for (unsigned seed = 1; seed <= 8; ++seed) {
        CAPTURE(seed, int(model), int(method));
        ContactProblem p = random_problem(seed, 3, 3, 5, 1.5, model, 8);
        std::mt19937_64 rng(seed + 100);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        const int nc = p.num_contacts();
        p.compliance.resize(nc);
        p.tangential_compliance.resize(nc);
        p.tangential_spring.resize(2 * size_t(nc));
        {
          const ProblemView<double> view = p.view();
          for (int k = 0; k < nc; ++k) {
            p.compliance[k] = 0.5 * delassus_row_norm(view, k, p.normal[k]);
            p.tangential_compliance[k] = 0.5 * delassus_row_norm(view, k, p.tangent1[k]);
            p.tangential_spring[2 * k] = 0.1 * u(rng);
            p.tangential_spring[2 * k + 1] = 0.1 * u(rng);
          }
        }
        p.finalize();
        BatchedSolver batched;
        const SolveResult r = batched.solve(p, tight(method), test_controls());
        const SolveResult ref = solve_reference(p, tight(method));
        for (int i = 0; i < p.num_islands(); ++i) {
          REQUIRE(r.islands[i].converged);
          REQUIRE(ref.islands[i].converged);
        }
        CHECK(result_difference(p, r, ref) <= 1e-6);
        const ProblemView<double> view = p.view();
        int sticking = 0;
        for (int k = 0; k < nc; ++k) {
          double b1, b2;
          tangent_impulse(view, k, r.beta.data(), b1, b2);
          // (The pyramid's interior is not the disk's: checked on the cone.)
          if (model != FrictionModel::cone || !(r.alpha[k] > 1e-6) || std::hypot(b1, b2) > 0.9 * p.mu[k] * r.alpha[k])
            continue;
          ++sticking;
          const Vec3d vel = contact_velocity(view, k, r.v.data(), r.w.data());
          CHECK(std::abs(vel.y + p.tangential_compliance[k] * (b1 - p.tangential_spring[2 * k])) <= 1e-7);
          CHECK(std::abs(vel.z + p.tangential_compliance[k] * (b2 - p.tangential_spring[2 * k + 1])) <= 1e-7);
        }
        if (model == FrictionModel::cone) sticking_total += sticking;
      }
    }
  }
  CAPTURE(sticking_total);
  CHECK(sticking_total >= 10);  // the check above ran on enough contacts to mean something
}

TEST_CASE("tangential springs keep their force when the solver does not warm-start", "[compliance][tangential]") {
  Scene scene = plate_on_floor(1e5, 1.0, 0.0, 0.5, 1e-3, 1.0);
  scene.solver.warm_start = false;
  World world(scene);
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  CHECK(world.bodies().x[body_index(world, "plate")].x == Approx(1.0 / 4e5).epsilon(1e-3));
}

TEST_CASE("the scene loader refuses a bad tangential stiffness", "[compliance][tangential]") {
  auto error_of = [](const std::string& fields) -> std::string {
    try {
      parse_scene(fmt::format(R"({{"time_step": 0.001, "steps": 1, "bodies": [
          {{"shape": {{"type": "plane"}}, "fixed": true}},
          {{"shape": {{"type": "sphere", "radius": 0.1}}, "position": [0, 0, 0.1], "mass": 1 {}}}]}})",
                              fields),
                  "t.json");
    } catch (const SceneError& e) {
      return e.path + ": " + e.what();
    }
    return "";
  };
  CHECK_THAT(error_of(R"(, "tangential_stiffness": 1e4)"), Catch::Contains("needs a \"stiffness\""));
  CHECK_THAT(error_of(R"(, "stiffness": 1e5, "tangential_stiffness": 0)"), Catch::Contains("bodies[1].tangential_stiffness"));
  CHECK_THAT(error_of(R"(, "stiffness": 1e5, "tangential_stiffness": -1)"), Catch::Contains("bodies[1].tangential_stiffness"));
  CHECK(error_of(R"(, "stiffness": 1e5, "tangential_stiffness": 4e4)").empty());
}
