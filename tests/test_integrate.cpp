// The integrate stage's element functions and what they rest on: rotation, inertia and quaternion
// properties, the gyroscopic predictor, the pose update, kinematic motions.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "step/bodies.h"
#include "kernels/integrate.h"
#include "kernels/shapes.h"

using namespace stagger;
using V = Vec3<double>;
using Q = Quat<double>;

namespace {
std::mt19937_64 rng(7);
double u(double lo = -1, double hi = 1) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
Q random_rotation() { return normalized(Q{u(), u(), u(), u()}); }
V random_vector() { return V{u(), u(), u()}; }
}  // namespace

TEST_CASE("rotation matrices of unit quaternions are proper rotations", "[integrate]") {
  for (int t = 0; t < 500; ++t) {
    Q q = random_rotation();
    Mat3<double> r = rotation(q);
    Mat3<double> rrt = r * transpose(r);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) REQUIRE(rrt.row(i)[j] == Approx(i == j ? 1.0 : 0.0).margin(1e-14));
    REQUIRE(det3(r) == Approx(1.0).epsilon(1e-14));
    // The matrix agrees with the quaternion sandwich q v q*.
    V v = random_vector();
    Q p = q * Q{0, v.x, v.y, v.z} * conjugate(q);
    V rv = r * v;
    REQUIRE(rv.x == Approx(p.x).margin(1e-14));
    REQUIRE(rv.y == Approx(p.y).margin(1e-14));
    REQUIRE(rv.z == Approx(p.z).margin(1e-14));
    // Composition: R(q1 q2) = R(q1) R(q2).
    Q q2 = random_rotation();
    Mat3<double> a = rotation(q * q2), b = r * rotation(q2);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) REQUIRE(a.row(i)[j] == Approx(b.row(i)[j]).margin(1e-14));
  }
}

TEST_CASE("axis-angle quaternions rotate by the angle about the axis", "[integrate]") {
  Q q = quat_from_axis_angle(V{0, 0, 1}, M_PI / 2);
  V x = rotate(q, V{1, 0, 0});
  REQUIRE(x.x == Approx(0).margin(1e-15));
  REQUIRE(x.y == Approx(1));
  V back = rotate_inverse(q, x);
  REQUIRE(back.x == Approx(1));
}

TEST_CASE("inertia of spheres and boxes matches the integrals", "[integrate]") {
  Shape s;
  s.type = ShapeType::sphere;
  s.radius = 0.3;
  REQUIRE(shape_volume(s) == Approx(4.0 / 3.0 * M_PI * 0.027));
  REQUIRE(unit_mass_inertia(s).x == Approx(0.4 * 0.09));
  Shape b;
  b.type = ShapeType::box;
  b.half_extents = {0.5, 1.0, 1.5};
  REQUIRE(shape_volume(b) == Approx(6.0));
  // Monte Carlo over the box: I_xx = E[y^2 + z^2] per unit mass.
  double ixx = 0, iyy = 0, izz = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double x = u(-0.5, 0.5), y = u(-1, 1), z = u(-1.5, 1.5);
    ixx += y * y + z * z;
    iyy += x * x + z * z;
    izz += x * x + y * y;
  }
  V inertia = unit_mass_inertia(b);
  REQUIRE(inertia.x == Approx(ixx / n).epsilon(0.01));
  REQUIRE(inertia.y == Approx(iyy / n).epsilon(0.01));
  REQUIRE(inertia.z == Approx(izz / n).epsilon(0.01));
}

TEST_CASE("world inertia tensors are R I R^T and invert each other", "[integrate]") {
  for (int t = 0; t < 200; ++t) {
    Q q = random_rotation();
    V d{u(0.1, 2), u(0.1, 2), u(0.1, 2)};
    Mat3<double> iw = world_tensor(q, d), inv = world_tensor(q, V{1 / d.x, 1 / d.y, 1 / d.z});
    Mat3<double> prod = iw * inv;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        REQUIRE(prod.row(i)[j] == Approx(i == j ? 1.0 : 0.0).margin(1e-12));
        REQUIRE(iw.row(i)[j] == Approx(iw.row(j)[i]).margin(1e-14));  // symmetric
      }
    Mat3<double> direct = inverse3(iw);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) REQUIRE(direct.row(i)[j] == Approx(inv.row(i)[j]).margin(1e-10));
  }
}

TEST_CASE("pose integration keeps quaternions unit and turns at the angular velocity", "[integrate]") {
  V x{0, 0, 0};
  Q q = quat_identity<double>();
  V w{0, 0, 2.0};
  const double h = 1e-4;
  for (int i = 0; i < 10000; ++i) integrate_pose(x, q, V{1, 0, 0}, w, h);
  REQUIRE(quat_norm(q) == Approx(1.0).epsilon(1e-14));
  REQUIRE(x.x == Approx(1.0).epsilon(1e-12));
  // After 1 s at 2 rad/s the body x axis points at angle 2 rad (first-order update: O(h) error).
  V ex = rotate(q, V{1, 0, 0});
  REQUIRE(std::atan2(ex.y, ex.x) == Approx(2.0).epsilon(1e-3));
}

TEST_CASE("the implicit gyroscopic predictor conserves torque-free motion", "[integrate]") {
  // Spin about the intermediate axis with a perturbation (Dzhanibekov): the explicit update gains
  // energy; one Newton step of the implicit one must not, and must keep |L| nearly constant.
  V inertia{1.0, 2.0, 3.0};
  Q q = quat_identity<double>();
  V w = rotate(q, V{0.01, 10.0, 0.01});
  auto energy = [&](Q qq, V ww) {
    V wb = rotate_inverse(qq, ww);
    return 0.5 * dot(wb, cwise_mul(inertia, wb));
  };
  auto momentum = [&](Q qq, V ww) { return norm(rotate(qq, cwise_mul(inertia, rotate_inverse(qq, ww)))); };
  const double e0 = energy(q, w), l0 = momentum(q, w), h = 1e-3;
  double e_max = e0, e_min = e0, spin_min = 10.0;
  V x{0, 0, 0};
  for (int i = 0; i < 5000; ++i) {
    w = gyroscopic_predictor(q, inertia, w, h);
    integrate_pose(x, q, V{0, 0, 0}, w, h);
    e_max = std::max(e_max, energy(q, w));
    e_min = std::min(e_min, energy(q, w));
    spin_min = std::min(spin_min, rotate_inverse(q, w).y);
  }
  CAPTURE(e_min / e0, spin_min);
  REQUIRE(e_max <= e0 * (1 + 1e-9));
  REQUIRE(momentum(q, w) == Approx(l0).epsilon(0.05));
  // And the motion is not frozen: the instability grows at sqrt((I2 - I1)(I3 - I2) / (I1 I3)) w = 5.8/s
  // from a perturbation of 1e-3, so the spin about the body's y axis reverses after about ln(1000) / 5.8
  // = 1.2 s, several times in the 5 s run: it must reach at least half its speed the other way round.
  REQUIRE(spin_min < -5.0);
  // Without gaining energy the step may lose some (one Newton step of an implicit update dissipates
  // O(h)), but not so much that the tumbling dies out.
  REQUIRE(e_min >= 0.9 * e0);
}

TEST_CASE("kinematic motions give their prescribed pose and velocity", "[integrate]") {
  KinematicMotion m;
  m.type = 1;
  m.axis = {0, 0, 1};
  m.amplitude = 0.02;
  m.frequency = 5;
  m.phase = 0.3;
  V x, v, w;
  Q q;
  kinematic_state(m, V{1, 2, 3}, quat_identity<double>(), 0.1, x, q, v, w);
  double arg = 2 * M_PI * 5 * 0.1 + 0.3;
  REQUIRE(x.z == Approx(3 + 0.02 * std::sin(arg)));
  REQUIRE(v.z == Approx(0.02 * 2 * M_PI * 5 * std::cos(arg)));
  REQUIRE(x.x == 1.0);
  m = KinematicMotion{};
  m.type = 2;
  m.velocity = {1, 0, 0};
  m.angular_velocity = {0, 0, M_PI};
  kinematic_state(m, V{0, 0, 0}, quat_identity<double>(), 0.5, x, q, v, w);
  REQUIRE(x.x == Approx(0.5));
  V ex = rotate(q, V{1, 0, 0});
  REQUIRE(ex.y == Approx(1.0));  // a quarter turn in 0.5 s
  REQUIRE(w.z == Approx(M_PI));
}
