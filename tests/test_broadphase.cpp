// Broad phase: the grid finds exactly the pairs whose inflated boxes overlap (checked against all
// pairs), never a pair of two non-dynamic bodies, without duplicates, in a fixed order.
#include <catch2/catch.hpp>

#include "helpers.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include <omp.h>

#include "collide/broadphase.h"
#include "collide/narrowphase.h"
#include "step/world.h"

using namespace stagger;
using stagger::test::make_body;
using stagger::test::part_not_run;
using stagger::test::validation_scene;

namespace {


// Bodies in a cube of side `extent`: small extents give a dense grid, large ones the hashed one.
Scene random_scene(int n, unsigned seed, double extent = 4.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Scene s;
  s.time_step = 0.01;
  s.steps = 1;
  Shape plane;
  plane.type = ShapeType::plane;
  s.bodies.push_back(make_body("floor", plane, {0, 0, 0}, BodyKind::fixed));
  Shape wall;
  wall.type = ShapeType::box;
  wall.half_extents = {50, 0.5, 50};
  s.bodies.push_back(make_body("wall", wall, {0, -0.5, 0}, BodyKind::fixed));
  for (int i = 0; i < n; ++i) {
    Shape shape;
    if (i % 3 == 0) {
      shape.type = ShapeType::box;
      shape.half_extents = {0.05 + 0.1 * u(rng), 0.05 + 0.1 * u(rng), 0.05 + 0.1 * u(rng)};
    } else {
      shape.type = ShapeType::sphere;
      shape.radius = i % 50 == 1 ? 0.8 : 0.05 + 0.1 * u(rng);  // a few large ones
    }
    BodyDesc b = make_body("b" + std::to_string(i), shape, {extent * u(rng), extent * u(rng), extent * u(rng)},
                           i % 17 == 0 ? BodyKind::fixed : BodyKind::dynamic);
    b.orientation = normalized(Quatd{u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5});
    if (b.kind == BodyKind::dynamic) b.velocity = {u(rng) - 0.5, u(rng) - 0.5, 5 * (u(rng) - 0.5)};
    s.bodies.push_back(b);
  }
  return s;
}

}  // namespace

TEST_CASE("grid pairs equal the all-pairs bounding-box test", "[broadphase]") {
  // Seeds 1-3: a compact scene (dense grid); 4-5: bodies spread far apart (hashed cells), with
  // clusters so that there are pairs to find.
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    CAPTURE(seed);
    Scene scene = random_scene(600, seed);
    if (seed > 3)
      for (size_t i = 2; i < scene.bodies.size(); ++i)
        if (i % 2 == 0) scene.bodies[i].position = scene.bodies[i].position + Vec3d{300.0 * double(i % 7), 0, 0};
    Bodies bodies = Bodies::from_scene(scene);
    ContactMargins margins;
    compute_contact_margins(bodies, 0.01, 0.005, scene.gravity, margins);
    Broadphase bp;
    std::vector<BodyPair> pairs;
    bp.find_pairs(bodies, margins, pairs);
    std::vector<BodyPair> sorted = pairs;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // each pair once

    std::set<std::pair<int, int>> expected;
    const int n = bodies.size();
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        if (!bodies.is_dynamic(a) && !bodies.is_dynamic(b)) continue;
        bool pa = bodies.shape[a].type == ShapeType::plane, pb = bodies.shape[b].type == ShapeType::plane;
        bool candidate;
        if (pa || pb) {
          int p = pa ? a : b, o = pa ? b : a;
          candidate = plane_clearance(bodies.x[p], rotate(bodies.q[p], Vec3d{0, 0, 1}), bodies.shape[o], bodies.x[o],
                                      bodies.q[o]) < margins.of(bodies, a, b);
        } else {
          auto box = [&](int i) {
            return inflated_aabb(bodies.shape[i], bodies.x[i], bodies.q[i], 0.5 * margins.envelope + margins.h * margins.speed[i]);
          };
          candidate = overlaps(box(a), box(b));
        }
        if (candidate) expected.insert({a, b});
      }
    std::set<std::pair<int, int>> found;
    for (const BodyPair& p : pairs) found.insert({p.a, p.b});
    REQUIRE(found == expected);
    REQUIRE(expected.size() > 100);

    // The order depends on the scene only, not on the number of threads.
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    std::vector<BodyPair> serial;
    bp.find_pairs(bodies, margins, serial);
    omp_set_num_threads(threads);
    REQUIRE(serial == pairs);
  }
}

TEST_CASE("every contact the narrow phase can find comes from a broad-phase pair", "[broadphase]") {
  Scene scene = random_scene(400, 9);
  Bodies bodies = Bodies::from_scene(scene);
  ContactMargins margins;
  compute_contact_margins(bodies, 0.01, 0.005, scene.gravity, margins);
  Broadphase bp;
  std::vector<BodyPair> pairs;
  bp.find_pairs(bodies, margins, pairs);
  std::vector<BodyPair> all;
  for (int a = 0; a < bodies.size(); ++a)
    for (int b = a + 1; b < bodies.size(); ++b)
      if (bodies.is_dynamic(a) || bodies.is_dynamic(b)) all.push_back({a, b});
  std::sort(pairs.begin(), pairs.end());
  Contacts from_grid, from_all;
  narrowphase(bodies, pairs, margins, from_grid);
  narrowphase(bodies, all, margins, from_all);
  REQUIRE(from_grid.size() == from_all.size());
  REQUIRE(from_grid.a == from_all.a);
  REQUIRE(from_grid.b == from_all.b);
  REQUIRE(from_grid.gap == from_all.gap);
  REQUIRE(from_grid.size() > 50);
}

namespace {
// Steps `scene`, comparing at every step the pairs of a broad phase kept from step to step (which
// reuses its last search while it serves) with a new search's; returns the kept one's searches.
long long kept_search_matches_new_ones(const Scene& scene, int steps) {
  World world(scene);
  Broadphase kept;
  std::vector<BodyPair> kept_pairs, fresh_pairs;
  for (int s = 1; s <= steps; ++s) {
    world.step();
    ContactMargins margins;
    compute_contact_margins(world.bodies(), scene.time_step, world.contact_envelope(), scene.gravity, margins);
    kept.find_pairs(world.bodies(), margins, kept_pairs);
    Broadphase fresh;
    fresh.find_pairs(world.bodies(), margins, fresh_pairs);
    CAPTURE(scene.name, s);
    REQUIRE(kept_pairs == fresh_pairs);
  }
  return kept.grid_searches();
}
}  // namespace

TEST_CASE("a grid search serves the steps after it with the pairs a new search would find", "[broadphase]") {
  // The 1k pour: the grid collapses, flows and settles. At every step the kept broad phase's pairs are
  // a new search's, in the same order (although the two searched different boxes); and it does reuse
  // its searches (measured: 38 searches in 1,000 steps; 819 when a body changing cell ended a search's
  // service).
  const int steps = 1000;
  const long long searches =
      kept_search_matches_new_ones(load_scene(std::string(STAGGER_SOURCE_DIR) + "/bench/scenes/spheres_pile_1k.json"), steps);
  CAPTURE(searches);
  REQUIRE(searches <= steps / 10);  // at least nine steps in ten served by an earlier search
  // Kinematic walls shaking a bed, resting and sliding boxes, a moving belt, meshes.
  kept_search_matches_new_ones(load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/brazil_nut_small.json"), 300);
  kept_search_matches_new_ones(validation_scene("box_stack"), 200);
  kept_search_matches_new_ones(validation_scene("card_house"), 200);
  kept_search_matches_new_ones(validation_scene("conveyor"), 200);
  if (std::filesystem::exists("/usr/share/glmark2/models/bunny.obj"))
    kept_search_matches_new_ones(load_scene(std::string(STAGGER_SOURCE_DIR) + "/scenes/bunny_drop.json"), 300);
  else
    part_not_run("the mesh case", "/usr/share/glmark2/models/bunny.obj is missing (package glmark2-data)");
}

TEST_CASE("a search serves bodies that all moved together, however far", "[broadphase]") {
  // Moving every box by one vector changes none of their overlaps: a shaken bed riding its shaker
  // keeps its search. A random cloud (boxes and spheres, some large ones in the grid's list of large
  // bodies) moved rigidly by 40 steps of 3 cm (the skin is a fifth of the median width, about 5 cm)
  // is searched once, and every step's pairs are a new search's. One body then moving on its own
  // beyond the skin ends the search's service.
  Scene scene = random_scene(300, 5, 2.0);
  Bodies bodies = Bodies::from_scene(scene);
  ContactMargins margins;
  compute_contact_margins(bodies, 0.01, 0.005, scene.gravity, margins);
  Broadphase kept;
  std::vector<BodyPair> kept_pairs, fresh_pairs;
  const Vec3d step{0.03, -0.02, 0.01};
  for (int s = 0; s <= 40; ++s) {
    if (s > 0)
      for (int i = 0; i < bodies.size(); ++i)
        if (bodies.shape[i].type != ShapeType::plane) bodies.x[i] += step;
    kept.find_pairs(bodies, margins, kept_pairs);
    Broadphase fresh;
    fresh.find_pairs(bodies, margins, fresh_pairs);
    CAPTURE(s);
    REQUIRE(kept_pairs == fresh_pairs);
  }
  REQUIRE(kept_pairs.size() > 100);
  REQUIRE(kept.grid_searches() == 1);
  // One dynamic sphere alone moves by a median width: searched again, the same pairs as a new search.
  int mover = -1;
  for (int i = 0; i < bodies.size() && mover < 0; ++i)
    if (bodies.is_dynamic(i) && bodies.shape[i].type == ShapeType::sphere && bodies.shape[i].radius < 0.2) mover = i;
  REQUIRE(mover >= 0);
  bodies.x[mover] += Vec3d{0.25, 0, 0};
  kept.find_pairs(bodies, margins, kept_pairs);
  Broadphase fresh;
  fresh.find_pairs(bodies, margins, fresh_pairs);
  REQUIRE(kept_pairs == fresh_pairs);
  REQUIRE(kept.grid_searches() == 2);
}
