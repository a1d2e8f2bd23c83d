// The repository's granular scenes are what they say they are (VALIDATION.md's Brazil-nut case):
// the bed's size, the intruder's size ratio, Γ = A (2πf)² / g from the container's motion, and every
// bead starting inside the box. Properties of the scene files, computed from their own numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "helpers.h"
#include "scene/mesh.h"

using namespace stagger;
using namespace stagger::test;

TEST_CASE("the Brazil-nut scenes: bed size, size ratio 3, Gamma 3, beads inside the box", "[scenes]") {
  struct Expect {
    const char* file;
    int beads_min, beads_max;
  };
  for (Expect e : {Expect{"scenes/brazil_nut_small.json", 300, 400}, Expect{"scenes/brazil_nut.json", 3500, 4500}}) {
    CAPTURE(e.file);
    Scene scene = load_scene(std::string(STAGGER_SOURCE_DIR) + "/" + e.file);
    World world(scene);
    const Bodies& bodies = world.bodies();
    int intruder = body_index(world, "intruder"), beads = 0;
    double bead_radius = 0;
    for (int i = 0; i < bodies.size(); ++i)
      if (bodies.is_dynamic(i) && i != intruder) {
        ++beads;
        bead_radius = bodies.shape[i].radius;
      }
    REQUIRE(beads >= e.beads_min);
    REQUIRE(beads <= e.beads_max);
    REQUIRE(bodies.shape[intruder].radius / bead_radius == Approx(3.0).epsilon(0.01));

    // Every container plane shakes with the same sinusoid, at Gamma = 3.
    const BodyDesc& floor = body_desc(scene, "floor");
    const double omega = 2 * M_PI * floor.motion.frequency;
    REQUIRE(floor.motion.amplitude * omega * omega / norm(scene.gravity) == Approx(3.0).epsilon(0.01));
    for (const BodyDesc& b : scene.bodies)
      if (b.shape.type == ShapeType::plane) {
        REQUIRE(b.motion.amplitude == floor.motion.amplitude);
        REQUIRE(b.motion.frequency == floor.motion.frequency);
      }

    // Inside the box: on the inner side of every plane, by at least the radius.
    for (int i = 0; i < bodies.size(); ++i) {
      if (!bodies.is_dynamic(i)) continue;
      for (int p = 0; p < bodies.size(); ++p) {
        if (bodies.shape[p].type != ShapeType::plane) continue;
        Vec3d n = rotate(bodies.q[p], Vec3d{0, 0, 1});
        REQUIRE(dot(bodies.x[i] - bodies.x[p], n) >= bodies.shape[i].radius - 1e-12);
      }
    }
  }
}

TEST_CASE("bunnies dropped into a box settle into a pile: no sample sinks by 1% of its size, no vertex by 3%, all come to rest", "[scenes][mesh]") {
  const std::string file = std::string(STAGGER_SOURCE_DIR) + "/scenes/bunny_drop.json";
  if (!std::filesystem::exists("/usr/share/glmark2/models/bunny.obj")) {
    skip_test("/usr/share/glmark2/models/bunny.obj is missing (Debian package glmark2-data)");
    return;
  }
  Scene scene = load_scene(file);
  World world(scene);
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  const Bodies& b = world.bodies();
  const Mesh& bunny = *b.meshes.at(0);
  const double size = 2 * max_elem(bunny.half_extents);  // ~13 cm
  // The contacts are the surface samples' (8 mm apart): those the solver keeps out.
  REQUIRE(world.last_step().overlap_before < 0.01 * size);
  int bunnies = 0;
  for (int i = 0; i < b.size(); ++i) {
    if (!b.is_dynamic(i)) continue;
    ++bunnies;
    CAPTURE(b.id[i]);
    // At rest: no point of the bunny moves faster than 1 cm/s.
    REQUIRE(norm(b.v[i]) + norm(b.w[i]) * bunny.bounding_radius < 0.01);
    // No sinking, measured independently of the contacts' samples: every 5th vertex of the bunny
    // against the planes and against every other bunny's distance field. Between samples 8 mm apart a
    // convex bump can dip into its neighbour by about spacing^2 / (8 radius of curvature) before a
    // sample touches: 1 mm on the bunny's paws and ears. Over twelve runs with slightly different
    // solver settings the deepest vertex of the settled pile lay 0.6% to 2.5% of the size deep
    // (docs/scene_format.md, Meshes), with both the plain and the preconditioned APGD, so the bound
    // here is the model's resolution, 3%; the samples themselves stay within 1% (above).
    Mat3<double> ri = rotation(b.q[i]);
    for (int j = 0; j < b.size(); ++j) {
      if (j == i) continue;
      double deepest = 1e9;
      if (b.shape[j].type == ShapeType::plane) {
        Vec3d n = rotate(b.q[j], Vec3d{0, 0, 1});
        for (std::size_t v = 0; v < bunny.vertices.size(); v += 5)
          deepest = std::min(deepest, dot(b.x[i] + ri * bunny.vertices[v] - b.x[j], n));
      } else if (norm(b.x[j] - b.x[i]) < 2 * bunny.bounding_radius) {
        Mat3<double> rj = rotation(b.q[j]);
        for (std::size_t v = 0; v < bunny.vertices.size(); v += 5) {
          Vec3d g;
          Vec3d local = transpose(rj) * (b.x[i] + ri * bunny.vertices[v] - b.x[j]);
          deepest = std::min(deepest, mesh_distance(b.mesh_views[0], local, g));
        }
      }
      CAPTURE(b.id[j], deepest, size);
      REQUIRE(deepest > -0.03 * size);
    }
  }
  REQUIRE(bunnies == 10);
}

namespace {

// Where the intruder is after shaking: its rise from its start on the floor, and the fraction of the
// beads whose centres lie below its centre.
struct IntruderEnd {
  double rise, above;
};

// The demo bed (scenes/brazil_nut_small.json) shaken at `gamma` for `seconds` from the initial state
// of grid seed `seed`: where the intruder is, measured at a whole number of shaking periods (the
// container back at its rest position).
IntruderEnd shaken_intruder(double gamma, unsigned seed, double seconds, bool defaults) {
  const std::string file = std::string(STAGGER_SOURCE_DIR) + "/scenes/brazil_nut_small.json";
  nlohmann::json j = nlohmann::json::parse(read_scene_text(file), nullptr, true, /*ignore_comments=*/true);
  double frequency = 0;
  for (auto& b : j["bodies"])
    if (b.contains("motion")) {
      frequency = b["motion"]["frequency"].get<double>();
      const double omega = 2 * M_PI * frequency;
      b["motion"]["amplitude"] = gamma * 9.81 / (omega * omega);
    }
  REQUIRE(frequency > 0);
  j["generators"][0]["seed"] = seed;
  j.erase("duration");
  j["steps"] = std::lround(std::round(seconds * frequency) / frequency / j["time_step"].get<double>());
  j.erase("output");
  if (defaults) j.erase("solver");
  Scene scene = parse_scene(j.dump(), file);
  World world(scene);
  const int intruder = body_index(world, "intruder");
  const double start = world.bodies().x[intruder].z;
  for (std::int64_t s = 0; s < scene.steps; ++s) world.step();
  const Bodies& bodies = world.bodies();
  const double z = bodies.x[intruder].z;
  int beads = 0, below = 0;
  for (int i = 0; i < bodies.size(); ++i)
    if (i != intruder && bodies.is_dynamic(i)) {
      ++beads;
      below += bodies.x[i].z < z;
    }
  REQUIRE(beads > 300);
  return {z - start, double(below) / beads};
}

}  // namespace

// VALIDATION.md's Brazil-nut case as dynamics, on a bed small enough for CI, with the solver at its
// defaults and with the demo's own settings (Coulomb APGD to 2e-3): shaken at Gamma = 3 the
// intruder (three bead diameters, on the floor at the start) rises to the top of the bed; at
// Gamma = 0.8 the bed never leaves the container floor and the intruder stays where it is (over the
// same 7 s, so that a slow creep would show). Three
// initial states each (the grid's jitter seed): a shaken bed is chaotic, so one run says little.
// "The top": after 49 periods (7 s) its centre is above 85% of the beads' (the bed is about seven
// beads deep, so that is its top layer). Measured (2026-11-27, d327be9) over 14 s for the three seeds,
// sampled every 7 periods: above 90-96% of the beads by 5-6 s and 93-100% from then on.
TEST_CASE("Brazil-nut bed: the intruder rises to the top at Gamma 3 and stays put at Gamma 0.8, from three initial states",
          "[scenes][physics][brazil_nut]") {
  for (unsigned seed : {1u, 2u, 3u}) {
    for (bool defaults : {true, false}) {
      CAPTURE(seed, defaults);
      const IntruderEnd calm = shaken_intruder(0.8, seed, 7.0, defaults),
                        shaken = shaken_intruder(3.0, seed, 7.0, defaults);
      CAPTURE(calm.rise, shaken.rise, shaken.above);
      CHECK(std::fabs(calm.rise) < 1e-3);  // stays on the floor (within a millimetre)
      CHECK(shaken.rise > 0.03);           // three bead diameters up (the bed is about 6 cm deep)
      CHECK(shaken.above >= 0.85);         // in the top layer
    }
  }
}

namespace {
// The median sphere's displacement from `from` to `to` steps of the 1k pour at the defaults (1,000
// spheres of r = 1 cm poured into a box), from the initial state of jitter seed `seed`.
double pile_median_creep(unsigned seed, int from, int to) {
  const std::string file = std::string(STAGGER_SOURCE_DIR) + "/bench/scenes/spheres_pile_1k.json";
  nlohmann::json j = nlohmann::json::parse(read_scene_text(file), nullptr, true, /*ignore_comments=*/true);
  j["generators"][0]["seed"] = seed;
  World world(parse_scene(j.dump(), file));
  for (int s = 0; s < from; ++s) world.step();
  const std::vector<Vec3d> settled = world.bodies().x;
  for (int s = from; s < to; ++s) world.step();
  const Bodies& b = world.bodies();
  std::vector<double> moved;
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) moved.push_back(norm(b.x[i] - settled[i]));
  REQUIRE(moved.size() == 1000);
  std::nth_element(moved.begin(), moved.begin() + moved.size() / 2, moved.end());
  return moved[moved.size() / 2];
}
}  // namespace

TEST_CASE("a poured pile stands once settled: its median sphere moves under 0.2% of its radius in 2 s", "[scenes][granular]") {
  // The 1k pour at the defaults, from 4 s to 6 s, in three initial states. A near-exact solve
  // (tolerance 1e-4) leaves the median sphere within 0.2-1.1 um over 2 s; spheres on the floor may
  // roll for ever (no rolling resistance), hence the median. While the granular error scale counted
  // the gaps of every neighbour in full, the pile crept 44-221 um in 2 s in every initial state (Coulomb
  // APGD at 2e-3: 517-752 um); with them capped (host/scene/scene.h, error_scale_gap_cap) the median
  // creep is a few um. But a settling pile also rearranges now and then: a few spheres roll and the
  // pile around them shifts, at times that differ between initial states and between builds that
  // round differently (bench/rest/pile_rest.py, bench/results/epyc-2core_cpu/pile_rest_order.csv).
  // Over 2-4 s, 20 initial states: 1.8-24 um, two above 20 (9feb4ed's pair order); 1-60 um, five
  // above 20 (the order of (a, b), 2026-11-29). Over 4-6 s, 10 states: 2.5-6.9 um and one
  // rearrangement of 115 um; 1.6-19.7 um. So a steady creep shows in every state, a rearrangement in
  // one: at least two of the three states must stay under the bound.
  std::vector<double> medians;
  for (unsigned seed : {1u, 2u, 3u}) medians.push_back(pile_median_creep(seed, 4000, 6000));
  CAPTURE(medians);
  CHECK(std::count_if(medians.begin(), medians.end(), [](double m) { return m < 0.002 * 0.01; }) >= 2);
  // and a rearrangement stays one: under 2% of the radius (the largest measured, 115 um) in every state.
  CHECK(*std::max_element(medians.begin(), medians.end()) < 0.02 * 0.01);
}
