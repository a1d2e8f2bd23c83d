// A small island's natural-map error is measured in velocities (kernels/natural_map.h,
// residual_velocity_weight and island_free_norm2), so the friction it returns must not depend on how
// heavy the bodies are, how fast they slide or how small the step is. Every case below lost its
// friction at the default settings under FCLIB's measure (impulses in N s against velocities in m/s,
// relative to a |b| that holds the bodies' slip), while every step reported itself converged.
#include <catch2/catch.hpp>

#include <cmath>

#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

namespace {

Scene with_mass(Scene scene, const std::string& id, double mass) {
  for (BodyDesc& b : scene.bodies)
    if (b.id == id) b.mass = mass;
  return scene;
}

World run_to_end(const Scene& scene) {
  World world(scene);
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  return world;
}

}  // namespace

TEST_CASE("a block of 1 g or 1 mg slides down a steep slope at g (sin - mu cos) and sticks on a gentle one",
          "[validation][error_units]") {
  const double mass = GENERATE(1e-3, 1e-6);
  CAPTURE(mass);
  // The validation scenes' 1 kg block, lighter: the same motion, since every impulse scales with the mass.
  const Scene slides = with_mass(validation_scene("block_slides"), "body", mass);
  const double mu = std::min(body_desc(slides, "slope").friction, body_desc(slides, "body").friction);
  const double angle = M_PI / 6, g = norm(slides.gravity);  // the scene's slope: 30 degrees
  World world = run_to_end(slides);
  const double speed = norm(world.bodies().v[body_index(world, "body")]);
  REQUIRE(speed / world.time() == Approx(g * (std::sin(angle) - mu * std::cos(angle))).epsilon(0.01));

  const Scene sticks = with_mass(validation_scene("block_sticks"), "body", mass);
  World still(sticks);
  const Vec3d x0 = still.bodies().x[body_index(still, "body")];
  for (std::int64_t s = 0; s < sticks.steps; ++s) still.step();
  REQUIRE(norm(still.bodies().x[body_index(still, "body")] - x0) < 1e-5);
}

TEST_CASE("a ball launched sliding at 5 m/s with mu = 0.05 ends rolling at 5/7 of that", "[validation][error_units]") {
  // Friction brakes the slide by mu g h = 4.9e-4 m/s a step at h = 1e-3: less than the default
  // tolerance times the slip speed, so a tolerance relative to the slip let it slide on at 5 m/s.
  Scene scene;
  scene.time_step = 1e-3;
  scene.steps = 4000;  // rolling from t = 2 v0 / (7 mu g) = 2.91 s
  BodyDesc floor = make_body("floor", plane_shape(), {0, 0, 0}, BodyKind::fixed);
  BodyDesc ball = make_body("ball", sphere_shape(0.1), {0, 0, 0.1}, BodyKind::dynamic);
  floor.friction = ball.friction = 0.05;
  ball.velocity = {5, 0, 0};
  scene.bodies = {floor, ball};
  World world = run_to_end(scene);
  const int b = body_index(world, "ball");
  REQUIRE(world.bodies().v[b].x == Approx(5.0 * 5.0 / 7.0).epsilon(1e-3));
  REQUIRE(world.bodies().w[b].y * 0.1 == Approx(world.bodies().v[b].x).epsilon(1e-3));  // rolling: no slip
}

TEST_CASE("a conveyor at h = 1e-5 drags its box at mu g", "[validation][error_units]") {
  // Per step the belt's friction gives the box mu g h = 4.9e-5 m/s: at h = 1e-5 far below the
  // tolerance times the 1 m/s slip, and the box never moved.
  Scene scene = validation_scene("conveyor");
  scene.time_step = 1e-5;
  scene.steps = 10000;  // 0.1 s, well before it reaches the belt's speed
  const double mu = std::min(body_desc(scene, "belt").friction, body_desc(scene, "box").friction);
  World world = run_to_end(scene);
  REQUIRE(world.bodies().v[body_index(world, "box")].x == Approx(mu * norm(scene.gravity) * world.time()).epsilon(0.01));
}

TEST_CASE("a stack of six 1 mm glass cubes, offset and twisted, stands", "[validation][error_units]") {
  // Cubes of 2.5 mg: their impulses (about 2.5e-8 N s a step) were a natural-map residual too small to
  // see, the returned friction reached 40 times its cone, and the tower fell within a second.
  Scene scene;
  scene.time_step = 1e-3;
  scene.steps = 1000;
  BodyDesc ground = make_body("ground", plane_shape(), {0, 0, 0}, BodyKind::fixed);
  scene.bodies.push_back(ground);
  const double half = 5e-4, mass = 2500 * std::pow(2 * half, 3);
  for (int i = 0; i < 6; ++i) {
    const double sign = i % 2 ? 1 : -1, twist = sign * M_PI / 18;  // +-0.1 mm and +-10 degrees, alternating
    BodyDesc cube = make_body("c" + std::to_string(i), box_shape(half, half, half), {i == 0 ? 0.0 : sign * 1e-4, 0, half * (2 * i + 1)},
                              BodyKind::dynamic);
    cube.mass = mass;
    cube.orientation = Quatd{std::cos(twist / 2), 0, 0, std::sin(twist / 2)};
    scene.bodies.push_back(cube);
  }
  World world(scene);
  const int top = body_index(world, "c5");
  const Vec3d x0 = world.bodies().x[top];
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  REQUIRE(norm(world.bodies().x[top] - x0) < 1e-6);  // a thousandth of a cube
}
