// The independent quality measures of SOLVER.md (host/solve/quality.cpp), each on hand-built impulses and
// velocities whose violations are known in closed form: one sphere-like body on the ground, one
// contact through its centre (normal +z, friction 0.5), so that the contact velocity is the body's.
#include <catch2/catch.hpp>

#include <cmath>

#include "problem_builders.h"
#include "solve/quality.h"

using namespace stagger;
using namespace stagger::test;

namespace {

constexpr double kMu = 0.5, kH = 0.01, kGap = 0.001;

// A unit mass falling at 1 m/s onto the ground, the contact at its centre, c = 0.
ContactProblem falling_body() {
  ContactProblem p;
  add_body(p, 0, 1.0, Vec3d{1, 1, 1}, quat_identity<double>(), Vec3d{0, 0, -1}, Vec3d{0, 0, 0});
  add_contact(p, 0, 0, -1, Vec3d{0, 0, 1}, Vec3d{0, 0, 0}, Vec3d{0, 0, 0}, kMu, 0.0);
  close_islands(p, 1);
  return p;
}

// A result with normal impulse `alpha`, friction (b1, b2) in the contact's (t1, t2) frame and body
// velocity v; the solver's own error is set to nonsense, which the measures must not read.
SolveResult result(double alpha, double b1, double b2, Vec3d v) {
  SolveResult r;
  r.alpha = {alpha};
  r.beta = {b1, b2};
  r.v = {v};
  r.w = {Vec3d{0, 0, 0}};
  r.islands.resize(1);
  r.islands[0].error = 123.0;
  r.islands[0].converged = true;
  return r;
}

StepQuality measured(const ContactProblem& p, const SolveResult& r) { return measure_quality(p, r, {kGap}, kH); }

}  // namespace

TEST_CASE("quality of an exact solution: the body stops on the ground, every measure zero", "[quality]") {
  const ContactProblem p = falling_body();
  const StepQuality q = measured(p, result(1.0, 0, 0, Vec3d{0, 0, 0}));
  CHECK(q.signorini_violation == 0.0);
  CHECK(q.complementarity == 0.0);
  CHECK(q.cone_violation == 0.0);
  CHECK(q.dissipation_violation == 0.0);
  CHECK(q.natural_map_error == Approx(0.0).margin(1e-15));
  CHECK(q.penetration_after == 0.0);
  CHECK(q.sliding_contacts == 0);
}

TEST_CASE("quality of a penetrating answer: Signorini, complementarity, overlap after, natural map", "[quality]") {
  // Too small an impulse: the body still approaches at 0.2 m/s.
  const ContactProblem p = falling_body();
  const StepQuality q = measured(p, result(0.8, 0, 0, Vec3d{0, 0, -0.2}));
  CHECK(q.signorini_violation == Approx(0.2));
  CHECK(q.complementarity == Approx(0.8 * 0.2));
  CHECK(q.penetration_after == Approx(-(kGap + kH * -0.2)));  // 1 mm of overlap after the step
  CHECK(q.cone_violation == 0.0);
  // gamma - P_K(gamma - v~) = (0.8, 0, 0) - (1.0, 0, 0); |b| = 1 (the free velocity)
  CHECK(q.natural_map_error == Approx(0.2));
}

TEST_CASE("the natural map keeps a closing velocity under an impulse that dwarfs it", "[quality]") {
  // gamma - P_K(gamma - v~) is v~ when gamma - v~ lies in the cone; computed so, 1e17 - (1e17 + 0.2)
  // rounded to 0, and a ball crushed between a wall and a piston (impulses growing without bound)
  // was reported converged with an error of exactly 0.
  const ContactProblem p = falling_body();
  const StepQuality q = measured(p, result(1e17, 0, 0, Vec3d{0, 0, -0.2}));
  CHECK(q.natural_map_error == Approx(0.2));  // |v~| / |b|, as for the small impulse above
  CHECK(q.signorini_violation == Approx(0.2));
}

TEST_CASE("quality of friction outside the cone", "[quality]") {
  const ContactProblem p = falling_body();
  const StepQuality q = measured(p, result(1.0, 0.8, 0, Vec3d{0, 0, 0}));
  CHECK(q.cone_violation == Approx(0.8 - kMu * 1.0));
  CHECK(q.signorini_violation == 0.0);
  CHECK(q.natural_map_error > 0.1);
}

TEST_CASE("quality of sliding contacts: unsaturated and misdirected friction", "[quality]") {
  const ContactProblem p = falling_body();
  const Vec3d t1 = p.tangent1[0];  // slip of 1 m/s along t1
  SECTION("exact: saturated and opposed to the slip") {
    const StepQuality q = measured(p, result(1.0, -kMu, 0, t1));
    CHECK(q.sliding_contacts == 1);
    CHECK(q.dissipation_violation == Approx(0.0).margin(1e-15));
    CHECK(q.natural_map_error == Approx(0.0).margin(1e-15));
  }
  SECTION("half the Coulomb bound") {
    const StepQuality q = measured(p, result(1.0, -0.25, 0, t1));
    CHECK(q.sliding_contacts == 1);
    CHECK(q.dissipation_violation == Approx(0.5));  // (mu alpha - |beta|) / (mu alpha)
    // v~ = (mu |v_t|, 1, 0); gamma - v~ = (0.5, -1.25, 0) projects onto the cone at (0.9, -0.45, 0)
    CHECK(q.natural_map_error == Approx(std::sqrt(0.1 * 0.1 + 0.2 * 0.2)));
  }
  SECTION("saturated but pushing along the slip") {
    const StepQuality q = measured(p, result(1.0, kMu, 0, t1));
    CHECK(q.dissipation_violation == Approx(2.0));  // 1 + cos(angle between friction and slip)
    CHECK(q.cone_violation == Approx(0.0).margin(1e-15));
  }
}

TEST_CASE("the natural-map error is relative to the free velocity, with a floor at rest", "[quality]") {
  ContactProblem p = falling_body();
  p.v_pred[0] = Vec3d{0, 0, -4};  // |b| = 4: the same residual, a quarter of the error
  CHECK(measured(p, result(0.8, 0, 0, Vec3d{0, 0, -0.2})).natural_map_error == Approx(0.05));
  p.v_pred[0] = Vec3d{0, 0, 0};  // no free velocity: absolute, at 1e-6 m/s per row (3 rows)
  CHECK(measured(p, result(0.0, 0, 0, Vec3d{0, 0, -1e-6})).natural_map_error == Approx(1e-6 / (1e-6 * std::sqrt(3.0))));
}
