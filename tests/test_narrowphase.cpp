// Narrow phase on configurations with known answers: touching, separated, speculative (within the
// margin), penetrating; face-face, edge-edge and vertex-face boxes. Normals point from B into A.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "helpers.h"
#include "kernels/narrowphase.h"

using namespace stagger;
using namespace stagger::test;
using V = Vec3<double>;
using Q = Quat<double>;

namespace {

Q identity() { return quat_identity<double>(); }
Q about(V axis, double angle) { return quat_from_axis_angle(normalized(axis), angle); }

struct Result {
  int count;
  bool swapped;
  ContactPoint<double> c[kMaxPairContacts];
};

Result run(const Shape& sa, V xa, Q qa, const Shape& sb, V xb, Q qb, double margin = 1e-9) {
  Result r;
  r.count = collide(sa, BodyPose{xa, qa}, sb, BodyPose{xb, qb}, margin, r.c, r.swapped);
  return r;
}

double min_gap(const Result& r) {
  double g = 1e300;
  for (int k = 0; k < r.count; ++k) g = std::min(g, r.c[k].gap);
  return g;
}

bool near(V a, V b, double tol = 1e-9) { return norm(a - b) <= tol; }

}  // namespace

TEST_CASE("sphere-sphere: touching, separated, speculative, penetrating", "[narrowphase]") {
  // B at the origin, A above it along +z: the normal from B into A is +z.
  auto touching = run(sphere_shape(1), {0, 0, 2}, identity(), sphere_shape(1), {0, 0, 0}, identity());
  REQUIRE(touching.count == 1);
  REQUIRE(touching.c[0].gap == Approx(0).margin(1e-12));
  REQUIRE(near(touching.c[0].normal, {0, 0, 1}));
  REQUIRE(near(touching.c[0].point, {0, 0, 1}));

  REQUIRE(run(sphere_shape(1), {0, 0, 2.5}, identity(), sphere_shape(1), {0, 0, 0}, identity(), 0.1).count == 0);

  auto speculative = run(sphere_shape(1), {0, 0, 2.05}, identity(), sphere_shape(1), {0, 0, 0}, identity(), 0.1);
  REQUIRE(speculative.count == 1);
  REQUIRE(speculative.c[0].gap == Approx(0.05));
  REQUIRE(near(speculative.c[0].point, {0, 0, 1.025}));

  auto deep = run(sphere_shape(0.5), {0.3, 0.4, 0}, identity(), sphere_shape(1), {0, 0, 0}, identity());
  REQUIRE(deep.count == 1);
  REQUIRE(deep.c[0].gap == Approx(0.5 - 1.5));
  REQUIRE(near(deep.c[0].normal, {0.6, 0.8, 0}));
}

TEST_CASE("sphere-plane follows the plane's orientation", "[narrowphase]") {
  // A plane through (0, 0, 1) tilted 30 degrees about x; its normal is (0, -sin 30, cos 30).
  Q tilt = about({1, 0, 0}, M_PI / 6);
  V n{0, -0.5, std::sqrt(3.0) / 2};
  V origin{0, 0, 1};
  auto r = run(sphere_shape(0.2), origin + 0.15 * n, identity(), plane_shape(), origin, tilt);
  REQUIRE(r.count == 1);
  REQUIRE_FALSE(r.swapped);
  REQUIRE(r.c[0].gap == Approx(-0.05));
  REQUIRE(near(r.c[0].normal, n));
  REQUIRE(run(sphere_shape(0.2), origin + 0.5 * n, identity(), plane_shape(), origin, tilt, 0.1).count == 0);
  // The plane given first: the contact still has the sphere as A.
  auto swapped = run(plane_shape(), origin, tilt, sphere_shape(0.2), origin + 0.15 * n, identity());
  REQUIRE(swapped.count == 1);
  REQUIRE(swapped.swapped);
  REQUIRE(near(swapped.c[0].normal, n));
}

TEST_CASE("sphere-box: face, edge and inside regions", "[narrowphase]") {
  Shape b = box_shape(1, 1, 1);
  auto face = run(sphere_shape(0.5), {0.2, 0.1, 1.4}, identity(), b, {0, 0, 0}, identity());
  REQUIRE(face.count == 1);
  REQUIRE(face.c[0].gap == Approx(-0.1));
  REQUIRE(near(face.c[0].normal, {0, 0, 1}));

  auto edge = run(sphere_shape(0.5), {1.3, 0, 1.4}, identity(), b, {0, 0, 0}, identity());
  REQUIRE(edge.count == 1);
  REQUIRE(edge.c[0].gap == Approx(0.0).margin(1e-12));
  REQUIRE(near(edge.c[0].normal, {0.6, 0, 0.8}));

  auto inside = run(sphere_shape(0.25), {0.1, 0, 0.7}, identity(), b, {0, 0, 0}, identity());
  REQUIRE(inside.count == 1);
  REQUIRE(inside.c[0].gap == Approx(-0.3 - 0.25));
  REQUIRE(near(inside.c[0].normal, {0, 0, 1}));

  // A rotated box: the answer rotates with it.
  Q rot = about({0, 0, 1}, M_PI / 4);
  auto rotated = run(sphere_shape(0.5), rotate(rot, V{1.4, 0, 0}), identity(), b, {0, 0, 0}, rot);
  REQUIRE(rotated.c[0].gap == Approx(-0.1));
  REQUIRE(near(rotated.c[0].normal, rotate(rot, V{1, 0, 0})));
}

TEST_CASE("box-plane: resting face gives its 4 corners, a tilted box one", "[narrowphase]") {
  auto rest = run(box_shape(1, 2, 0.5), {3, 4, 0.5}, identity(), plane_shape(), {0, 0, 0}, identity());
  REQUIRE(rest.count == 4);
  std::set<uint32_t> features;
  for (int k = 0; k < 4; ++k) {
    REQUIRE(rest.c[k].gap == Approx(0).margin(1e-12));
    REQUIRE(near(rest.c[k].normal, {0, 0, 1}));
    REQUIRE(rest.c[k].point.z == Approx(0).margin(1e-12));
    REQUIRE(std::fabs(rest.c[k].point.x - 3) == Approx(1));
    REQUIRE(std::fabs(rest.c[k].point.y - 4) == Approx(2));
    features.insert(rest.c[k].feature);
  }
  REQUIRE(features.size() == 4);
  // Balanced on an edge-free corner: rotate so that one corner points down.
  Q corner_down = about({1, -1, 0}, std::atan(std::sqrt(2.0)));
  double reach = std::sqrt(3.0);  // unit cube corner distance
  auto tilted = run(box_shape(1, 1, 1), {0, 0, reach - 0.01}, corner_down, plane_shape(), {0, 0, 0}, identity(), 0.001);
  REQUIRE(tilted.count == 1);
  REQUIRE(tilted.c[0].gap == Approx(-0.01).margin(1e-9));
}

TEST_CASE("box-box face-face: a resting box has a 4-point manifold", "[narrowphase]") {
  // A (1x1x1 half extents) on top of B (2x2x1), overlapping by 0.01.
  auto r = run(box_shape(1, 1, 1), {0.5, 0.3, 1.99}, identity(), box_shape(2, 2, 1), {0, 0, 0}, identity());
  REQUIRE(r.count == 4);
  for (int k = 0; k < r.count; ++k) {
    REQUIRE(r.c[k].gap == Approx(-0.01));
    REQUIRE(near(r.c[k].normal, {0, 0, 1}));
    REQUIRE(r.c[k].point.z == Approx(0.995));
    REQUIRE(std::fabs(r.c[k].point.x - 0.5) == Approx(1));  // the corners of A's bottom face
    REQUIRE(std::fabs(r.c[k].point.y - 0.3) == Approx(1));
  }
  // Swapping the arguments swaps A and B: the normal flips.
  auto s = run(box_shape(2, 2, 1), {0, 0, 0}, identity(), box_shape(1, 1, 1), {0.5, 0.3, 1.99}, identity());
  REQUIRE(s.count == 4);
  REQUIRE(near(s.c[0].normal, {0, 0, -1}));
}

TEST_CASE("box-box face-face with partial overlap clips to the common rectangle", "[narrowphase]") {
  // Equal cubes, the top one shifted by (1.5, 0.5): the faces share [0.5,1] x [-0.5,1].
  auto r = run(box_shape(1, 1, 1), {1.5, 0.5, 2.0}, identity(), box_shape(1, 1, 1), {0, 0, 0}, identity(), 1e-6);
  REQUIRE(r.count == 4);
  for (int k = 0; k < r.count; ++k) {
    REQUIRE(r.c[k].gap == Approx(0).margin(1e-12));
    REQUIRE(r.c[k].point.x >= 0.5 - 1e-12);
    REQUIRE(r.c[k].point.x <= 1.0 + 1e-12);
    REQUIRE(r.c[k].point.y >= -0.5 - 1e-12);
    REQUIRE(r.c[k].point.y <= 1.0 + 1e-12);
  }
}

TEST_CASE("box-box: a box turned 45 degrees on another keeps a 4-point manifold of the octagon", "[narrowphase]") {
  Q turn = about({0, 0, 1}, M_PI / 4);
  auto r = run(box_shape(1, 1, 1), {0, 0, 1.995}, turn, box_shape(1, 1, 1), {0, 0, 0}, identity());
  REQUIRE(r.count == 4);
  // The 4 kept points must span a large part of the octagon (a manifold that holds the box up).
  double spread = 0;
  for (int k = 0; k < r.count; ++k) {
    REQUIRE(r.c[k].gap == Approx(-0.005));
    spread = std::max(spread, std::hypot(r.c[k].point.x, r.c[k].point.y));
  }
  REQUIRE(spread > 1.0);
}

TEST_CASE("box-box edge-edge: crossed edges give one contact at the crossing", "[narrowphase]") {
  // A rotated 45 degrees about x (its lowest edge runs along x), B rotated 45 degrees about y (its
  // highest edge runs along y): the edges cross above the origin.
  double d = std::sqrt(2.0);
  Q qa = about({1, 0, 0}, M_PI / 4), qb = about({0, 1, 0}, M_PI / 4);
  auto r = run(box_shape(1, 1, 1), {0, 0, 2 * d - 0.02}, qa, box_shape(1, 1, 1), {0, 0, 0}, qb);
  REQUIRE(r.count == 1);
  REQUIRE(r.c[0].gap == Approx(-0.02).margin(1e-9));
  REQUIRE(near(r.c[0].normal, {0, 0, 1}, 1e-9));
  REQUIRE(near(r.c[0].point, {0, 0, d - 0.01}, 1e-9));
  // Slightly apart and within the margin: a speculative edge contact with the positive gap.
  auto apart = run(box_shape(1, 1, 1), {0, 0, 2 * d + 0.03}, qa, box_shape(1, 1, 1), {0, 0, 0}, qb, 0.05);
  REQUIRE(apart.count == 1);
  REQUIRE(apart.c[0].gap == Approx(0.03).margin(1e-9));
  REQUIRE(run(box_shape(1, 1, 1), {0, 0, 2 * d + 0.1}, qa, box_shape(1, 1, 1), {0, 0, 0}, qb, 0.05).count == 0);
}

TEST_CASE("box-box vertex-face: a corner pressing on a face", "[narrowphase]") {
  Q corner_down = about({1, -1, 0}, std::atan(std::sqrt(2.0)));
  double reach = std::sqrt(3.0);
  auto r = run(box_shape(1, 1, 1), {0.2, -0.1, 1 + reach - 0.03}, corner_down, box_shape(3, 3, 1), {0, 0, 0}, identity(), 1e-6);
  REQUIRE(r.count == 1);
  REQUIRE(r.c[0].gap == Approx(-0.03).margin(1e-9));
  REQUIRE(near(r.c[0].normal, {0, 0, 1}, 1e-9));
  REQUIRE(near(r.c[0].point, {0.2, -0.1, 1 - 0.015}, 1e-9));
}

TEST_CASE("box-box: separated beyond the margin gives nothing", "[narrowphase]") {
  REQUIRE(run(box_shape(1, 1, 1), {0, 0, 2.2}, identity(), box_shape(1, 1, 1), {0, 0, 0}, identity(), 0.1).count == 0);
  REQUIRE(run(box_shape(1, 1, 1), {3, 3, 0}, about({0, 0, 1}, 0.3), box_shape(1, 1, 1), {0, 0, 0}, identity(), 0.1).count == 0);
  auto near_face = run(box_shape(1, 1, 1), {0, 0, 2.05}, identity(), box_shape(1, 1, 1), {0, 0, 0}, identity(), 0.1);
  REQUIRE(near_face.count == 4);
  REQUIRE(min_gap(near_face) == Approx(0.05));
}

TEST_CASE("box-box: parallel edges of diagonally offset boxes give the true gap", "[narrowphase]") {
  // Unit cubes offset by (2.01, 2.01, 0): the closest features are two parallel vertical edges,
  // 0.01 sqrt(2) apart, which no face or edge axis of the separating-axis test captures.
  auto r = run(box_shape(1, 1, 1), {2.01, 2.01, 0}, identity(), box_shape(1, 1, 1), {0, 0, 0}, identity(), 0.05);
  REQUIRE(r.count == 1);
  REQUIRE(r.c[0].gap == Approx(0.01 * std::sqrt(2.0)).epsilon(1e-9));
  REQUIRE(near(r.c[0].normal, normalized(V{1, 1, 0}), 1e-9));
  REQUIRE(r.c[0].point.x == Approx(1.005));
  REQUIRE(std::fabs(r.c[0].point.z) <= 1.0);
  REQUIRE(run(box_shape(1, 1, 1), {2.1, 2.1, 0}, identity(), box_shape(1, 1, 1), {0, 0, 0}, identity(), 0.05).count == 0);
}

TEST_CASE("box-box feature keys are stable under small motions", "[narrowphase]") {
  auto keys = [](const Result& r) {
    std::set<uint32_t> k;
    for (int i = 0; i < r.count; ++i) k.insert(r.c[i].feature);
    return k;
  };
  Q turn = about({0, 0, 1}, 0.3);
  auto a = run(box_shape(1, 1, 1), {0.2, 0.1, 1.99}, turn, box_shape(2, 2, 1), {0, 0, 0}, identity());
  auto b = run(box_shape(1, 1, 1), {0.2001, 0.1002, 1.9899}, about({0, 0, 1}, 0.3001), box_shape(2, 2, 1), {0, 0, 0}, identity());
  REQUIRE(a.count == 4);
  REQUIRE(keys(a) == keys(b));
  REQUIRE(keys(a).size() == 4);
}

TEST_CASE("box-box: a face resting flat keeps the same 4 of its octagon's points whatever the jitter", "[narrowphase]") {
  // A cube turned 30 degrees on another: the clipped face is an octagon whose 8 points lie at one depth.
  // A resting body jitters by 1e-10 m and rad; which point is "the deepest" then changes from step to
  // step, and so did the 4 points kept, which no warm start could follow (twenty boxes in a bin took
  // 50 ms a step at rest). The kept points must not depend on the jitter.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  auto keys = [](const Result& r) {
    std::set<uint32_t> k;
    for (int i = 0; i < r.count; ++i) k.insert(r.c[i].feature);
    return k;
  };
  const Q turn = about({0, 0, 1}, M_PI / 6);
  std::set<std::set<uint32_t>> seen;
  for (int trial = 0; trial < 200; ++trial) {
    const Q jitter = about({u(rng), u(rng), 0}, 1e-9 * (1 + u(rng)));
    const V shift{1e-10 * u(rng), 1e-10 * u(rng), 1e-10 * u(rng)};
    auto r = run(box_shape(1, 1, 1), V{0, 0, 1.999} + shift, jitter * turn, box_shape(1, 1, 1), {0, 0, 0}, identity());
    REQUIRE(r.count == 4);
    seen.insert(keys(r));
  }
  CHECK(seen.size() == 1);
}

TEST_CASE("box-box on random configurations: gaps agree with the separating-axis distance", "[narrowphase]") {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(-1, 1);
  int overlapping = 0, apart = 0, empty = 0;
  for (int t = 0; t < 3000; ++t) {
    V ea{0.3 + 0.7 * std::fabs(u(rng)), 0.3 + 0.7 * std::fabs(u(rng)), 0.3 + 0.7 * std::fabs(u(rng))};
    V eb{0.3 + 0.7 * std::fabs(u(rng)), 0.3 + 0.7 * std::fabs(u(rng)), 0.3 + 0.7 * std::fabs(u(rng))};
    Q qa = normalized(Q{u(rng), u(rng), u(rng), u(rng)}), qb = normalized(Q{u(rng), u(rng), u(rng), u(rng)});
    V xa{2 * u(rng), 2 * u(rng), 2 * u(rng)};
    double margin = 0.2;
    auto r = run(box_shape(ea.x, ea.y, ea.z), xa, qa, box_shape(eb.x, eb.y, eb.z), {0, 0, 0}, qb, margin);
    // Brute-force separating-axis separation over the 15 axes (the largest is a lower bound of the
    // distance when positive, and minus the penetration depth otherwise).
    Mat3<double> ra = rotation(qa), rb = rotation(qb);
    std::vector<V> axes;
    for (int i = 0; i < 3; ++i) {
      axes.push_back(ra.col(i));
      axes.push_back(rb.col(i));
      for (int j = 0; j < 3; ++j) {
        V c = cross(ra.col(i), rb.col(j));
        if (norm(c) > 1e-6) axes.push_back(normalized(c));
      }
    }
    double sep = -1e300;
    for (V a : axes) {
      double rA = ea.x * std::fabs(dot(a, ra.col(0))) + ea.y * std::fabs(dot(a, ra.col(1))) + ea.z * std::fabs(dot(a, ra.col(2)));
      double rB = eb.x * std::fabs(dot(a, rb.col(0))) + eb.y * std::fabs(dot(a, rb.col(1))) + eb.z * std::fabs(dot(a, rb.col(2)));
      sep = std::max(sep, std::fabs(dot(a, xa)) - rA - rB);
    }
    if (sep > margin) {
      REQUIRE(r.count == 0);
      continue;
    }
    // A face axis is preferred to a marginally better edge axis (by at most 2% of the smaller box),
    // so gaps may sit that much below the best separation.
    double tol = 0.02 * std::min(std::min(ea.x, std::min(ea.y, ea.z)), std::min(eb.x, std::min(eb.y, eb.z))) + 1e-9;
    // The distance of two random surface points, the smallest of many: an upper bound of the boxes'
    // distance.
    auto sampled_distance = [&] {
      auto surface_point = [&](V x, const Mat3<double>& rot, V e) {
        V local{e.x * u(rng), e.y * u(rng), e.z * u(rng)};
        int face = int(rng() % 3);
        local[face] = (rng() % 2 ? 1.0 : -1.0) * e[face];
        return x + rot * local;
      };
      double sampled = 1e300;
      for (int k = 0; k < 4000; ++k)
        sampled = std::min(sampled, norm(surface_point(xa, ra, ea) - surface_point(V{0, 0, 0}, rb, eb)));
      return sampled;
    };
    if (r.count == 0) {
      // Every clipped point beyond the margin: allowed only for boxes about the margin apart (the
      // separating-axis bound is a lower bound of their distance), never for overlapping boxes, and
      // never when two surface points lie closer than the margin by more than the face tolerance.
      REQUIRE(sep > 0);
      REQUIRE(sampled_distance() >= margin - tol);
      ++empty;
      continue;
    }
    (sep < 0 ? overlapping : apart)++;
    for (int k = 0; k < r.count; ++k) {
      REQUIRE(std::fabs(norm(r.c[k].normal) - 1) < 1e-12);
      REQUIRE(r.c[k].gap < margin);
      REQUIRE(r.c[k].gap >= sep - tol);  // no point deeper than the boxes' penetration depth
      // The normal separates the centres: from B (origin) into A.
      REQUIRE(dot(r.c[k].normal, xa) > -1e-9);
    }
    if (sep <= 0) {
      // Overlap: the deepest point realizes the penetration along the chosen axis.
      REQUIRE(min_gap(r) <= sep + tol);
    } else {
      // Apart: the smallest gap is the distance of the boxes, which lies between the separating-axis
      // bound and the distance of any two surface points (sampled here).
      REQUIRE(min_gap(r) <= sampled_distance() + 1e-9);
    }
  }
  REQUIRE(overlapping > 100);
  REQUIRE(apart > 10);
  CAPTURE(empty);
}
