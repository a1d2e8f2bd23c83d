// The analytic cases of VALIDATION.md, run through the whole step (collision detection, islands,
// solve, integration) on the scenes in scenes/validation/, with every solve backend the machine has. Expected values
// are computed from each scene's own parameters.
#include <catch2/catch.hpp>

#include <cmath>

#include "helpers.h"

using namespace stagger;
using namespace stagger::test;

namespace {

// Slope of an incline scene: angle and unit down-slope direction, from the plane's orientation.
struct Slope {
  double angle;
  Vec3d down;
  Vec3d normal;
};

Slope slope_of(const Scene& scene) {
  const BodyDesc& plane = body_desc(scene, "slope");
  Vec3d n = rotate(plane.orientation, Vec3d{0, 0, 1});
  Vec3d g = scene.gravity;
  Vec3d along = g - dot(g, n) * n;  // gravity's component in the plane points down the slope
  return Slope{std::acos(-dot(n, g) / norm(g)), normalized(along), n};
}

double friction_between(const Scene& scene, const std::string& a, const std::string& b) {
  return std::min(body_desc(scene, a).friction, body_desc(scene, b).friction);
}

World run(const Scene& scene, SolverBackend backend) {
  WorldOptions options;
  options.backend = backend;
  World world(scene, options);
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  return world;
}

}  // namespace

TEST_CASE("free fall follows the discrete formula", "[validation]") {
  Scene scene = validation_scene("free_fall");
  World world(scene);
  int ball = body_index(world, "ball");
  const double z0 = world.bodies().x[ball].z, g = -scene.gravity.z, h = scene.time_step;
  for (std::int64_t n = 1; n <= scene.steps; ++n) {
    world.step();
    double expected = z0 - g * h * h * double(n) * double(n + 1) / 2;
    REQUIRE(world.bodies().x[ball].z == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("a resting sphere stays and carries its weight", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("resting_sphere");
  WorldOptions options;
  options.backend = backend;
  World world(scene, options);
  int ball = body_index(world, "ball");
  const Vec3d x0 = world.bodies().x[ball];
  const double weight_impulse = body_desc(scene, "ball").mass * norm(scene.gravity) * scene.time_step;
  for (std::int64_t s = 0; s < scene.steps; ++s) {
    world.step();
    REQUIRE(world.solution().alpha.size() == 1);
    REQUIRE(world.solution().alpha[0] == Approx(weight_impulse).epsilon(1e-6));
  }
  REQUIRE(norm(world.bodies().x[ball] - x0) < 1e-6);
}

TEST_CASE("a block on a gentle slope sticks", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("block_sticks");
  Slope slope = slope_of(scene);
  REQUIRE(std::tan(slope.angle) < friction_between(scene, "slope", "body"));  // the scene is a sticking case
  World world(scene);
  Vec3d x0 = world.bodies().x[body_index(world, "body")];
  world = run(scene, backend);
  REQUIRE(norm(world.bodies().x[body_index(world, "body")] - x0) < 1e-5);
}

TEST_CASE("a block on a steep slope slides at g (sin - mu cos)", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("block_slides");
  Slope slope = slope_of(scene);
  double mu = friction_between(scene, "slope", "body"), g = norm(scene.gravity);
  REQUIRE(std::tan(slope.angle) > mu);
  World world = run(scene, backend);
  int b = body_index(world, "body");
  double acceleration = dot(world.bodies().v[b], slope.down) / world.time();
  REQUIRE(acceleration == Approx(g * (std::sin(slope.angle) - mu * std::cos(slope.angle))).epsilon(0.01));
}

TEST_CASE("a sphere rolls without slipping at (5/7) g sin", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("sphere_rolls");
  Slope slope = slope_of(scene);
  double g = norm(scene.gravity), r = body_desc(scene, "body").shape.radius;
  REQUIRE(friction_between(scene, "slope", "body") >= 2.0 / 7.0 * std::tan(slope.angle));
  WorldOptions options;
  options.backend = backend;
  World world(scene, options);
  int b = body_index(world, "body");
  double max_slip = 0;
  for (std::int64_t s = 0; s < scene.steps; ++s) {
    world.step();
    const Bodies& bodies = world.bodies();
    Vec3d contact_velocity = bodies.v[b] + cross(bodies.w[b], -r * slope.normal);
    max_slip = std::max(max_slip, norm(contact_velocity));
  }
  double acceleration = dot(world.bodies().v[b], slope.down) / world.time();
  REQUIRE(acceleration == Approx(5.0 / 7.0 * g * std::sin(slope.angle)).epsilon(0.01));
  REQUIRE(max_slip < 1e-5);
}

TEST_CASE("a sphere on a slippery slope slides and spins up", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("sphere_slides_and_rolls");
  Slope slope = slope_of(scene);
  double g = norm(scene.gravity), r = body_desc(scene, "body").shape.radius;
  double mu = friction_between(scene, "slope", "body");
  REQUIRE(mu < 2.0 / 7.0 * std::tan(slope.angle));
  World world = run(scene, backend);
  int b = body_index(world, "body");
  double acceleration = dot(world.bodies().v[b], slope.down) / world.time();
  double angular_acceleration = norm(world.bodies().w[b]) / world.time();
  REQUIRE(acceleration == Approx(g * (std::sin(slope.angle) - mu * std::cos(slope.angle))).epsilon(0.01));
  REQUIRE(angular_acceleration == Approx(5 * mu * g * std::cos(slope.angle) / (2 * r)).epsilon(0.01));
}

TEST_CASE("equal elastic spheres exchange velocities head-on", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("head_on_spheres");
  WorldOptions options;
  options.backend = backend;
  World world(scene, options);
  int left = body_index(world, "left"), right = body_index(world, "right");
  const Vec3d v_left = world.bodies().v[left], v_right = world.bodies().v[right];
  const double m_left = body_desc(scene, "left").mass, m_right = body_desc(scene, "right").mass;
  const Vec3d p0 = m_left * v_left + m_right * v_right;
  const double scale = m_left * norm(v_left) + m_right * norm(v_right);
  for (std::int64_t s = 0; s < scene.steps; ++s) {
    world.step();
    Vec3d p = m_left * world.bodies().v[left] + m_right * world.bodies().v[right];
    REQUIRE(norm(p - p0) <= 1e-12 * scale);
  }
  REQUIRE(norm(world.bodies().v[left] - v_right) < 1e-9);
  REQUIRE(norm(world.bodies().v[right] - v_left) < 1e-9);
}

TEST_CASE("an inelastic sphere does not bounce", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("inelastic_drop");
  WorldOptions options;
  options.backend = backend;
  World world(scene, options);
  int ball = body_index(world, "ball");
  bool landed = false;
  double max_up = 0;
  for (std::int64_t s = 0; s < scene.steps; ++s) {
    world.step();
    if (world.last_step().contacts > 0 && world.solution().alpha.size() == 1 && world.solution().alpha[0] > 0)
      landed = true;
    if (landed) max_up = std::max(max_up, world.bodies().v[ball].z);
  }
  REQUIRE(landed);
  REQUIRE(max_up < 1e-6);
  REQUIRE(world.bodies().x[ball].z == Approx(body_desc(scene, "ball").shape.radius).margin(1e-6));
}

TEST_CASE("a partially elastic ball leaves each impact at e times the impact speed", "[validation]") {
  auto backend = GENERATE(from_range(solve_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("partial_bounce");
  const double e = std::min(body_desc(scene, "floor").restitution, body_desc(scene, "ball").restitution);
  WorldOptions options;
  options.backend = backend;
  World world(scene, options);
  int ball = body_index(world, "ball");
  int bounces = 0;
  double before = world.bodies().v[ball].z;
  for (std::int64_t s = 0; s < scene.steps; ++s) {
    world.step();
    double after = world.bodies().v[ball].z;
    if (before < -0.5 && after > 0) {  // an impact (slow ones below the bounce threshold settle)
      REQUIRE(after == Approx(-e * before).epsilon(1e-6));
      ++bounces;
    }
    before = after;
  }
  REQUIRE(bounces >= 2);
}

TEST_CASE("a kinematic conveyor drags a box up to its speed", "[validation]") {
  auto backend = GENERATE(from_range(batched_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("conveyor");
  World world(scene, on_backend(backend));
  int box = body_index(world, "box");
  const double belt = norm(body_desc(scene, "belt").motion.velocity);
  const double mu = friction_between(scene, "belt", "box"), g = norm(scene.gravity);
  const double catch_up = belt / (mu * g);  // time to reach the belt's speed
  for (std::int64_t s = 0; s < scene.steps; ++s) {
    world.step();
    double v = world.bodies().v[box].x;
    if (world.time() < 0.8 * catch_up) REQUIRE(v == Approx(mu * g * world.time()).epsilon(0.01));
    if (world.time() > 1.2 * catch_up) REQUIRE(v == Approx(belt).epsilon(1e-6));
  }
}

TEST_CASE("a 2-level card house stands for 10 s", "[validation][literature]") {
  auto backend = GENERATE(from_range(batched_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("card_house");
  World world(scene, on_backend(backend));
  std::vector<int> cards;
  std::vector<Vec3d> start;
  for (int i = 0; i < world.bodies().size(); ++i)
    if (world.bodies().is_dynamic(i)) {
      cards.push_back(i);
      start.push_back(world.bodies().x[i]);
    }
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  for (size_t c = 0; c < cards.size(); ++c) {
    CAPTURE(world.bodies().id[cards[c]]);
    REQUIRE(norm(world.bodies().x[cards[c]] - start[c]) < 1e-3);
  }
}

TEST_CASE("a stack of ten boxes stands for 10 s", "[validation][slow]") {
  auto backend = GENERATE(from_range(batched_backends()));
  CAPTURE(backend_name(backend));
  Scene scene = validation_scene("box_stack");
  World world(scene, on_backend(backend));
  int top = body_index(world, "box9");
  Vec3d x0 = world.bodies().x[top];
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  Vec3d moved = world.bodies().x[top] - x0;
  REQUIRE(std::hypot(moved.x, moved.y) < 1e-3);
  REQUIRE(std::fabs(moved.z) < 1e-3);
}

TEST_CASE("in single precision the stack and the card house still stand, the sphere still rolls", "[validation][precision]") {
  auto backend = GENERATE(from_range(batched_backends()));
  CAPTURE(backend_name(backend));
  WorldOptions options = on_backend(backend);
  options.controls.precision = Precision::f32;
  for (const char* name : {"box_stack", "card_house"}) {
    CAPTURE(name);
    Scene scene = validation_scene(name);
    World world(scene, options);
    std::vector<Vec3d> start = world.bodies().x;
    for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
    for (int i = 0; i < world.bodies().size(); ++i) {
      CAPTURE(world.bodies().id[i]);
      REQUIRE(norm(world.bodies().x[i] - start[i]) < 1e-3);
    }
  }
  Scene scene = validation_scene("sphere_rolls");
  Slope slope = slope_of(scene);
  World world(scene, options);
  int b = body_index(world, "body");
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  double acceleration = dot(world.bodies().v[b], slope.down) / world.time();
  REQUIRE(acceleration == Approx(5.0 / 7.0 * norm(scene.gravity) * std::sin(slope.angle)).epsilon(0.01));
}
