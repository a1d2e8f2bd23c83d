// Islands: connected components of dynamic bodies, never joined through fixed ones; contacts and
// bodies grouped by island in increasing order.
#include <catch2/catch.hpp>

#include "helpers.h"

#include <omp.h>

#include <algorithm>
#include <random>

#include "step/islands.h"

using namespace stagger;
using stagger::test::make_body;

TEST_CASE("islands: connected dynamic bodies, never joined through fixed ones", "[islands]") {
  // Bodies 0, 4 fixed; contacts: 1-2, 2-3, 0-1, 0-5, 5-6, 4-7, 3-0.  Islands: {1,2,3}, {5,6}, {7}.
  Scene s;
  Shape sphere;
  sphere.type = ShapeType::sphere;
  sphere.radius = 1;
  for (int i = 0; i < 9; ++i)
    s.bodies.push_back(make_body(std::to_string(i), sphere, {0, 0, 0}, i == 0 || i == 4 ? BodyKind::fixed : BodyKind::dynamic));
  Bodies bodies = Bodies::from_scene(s);
  Contacts c;
  ContactPoint<double> p{{0, 0, 0}, {0, 0, 1}, 0.0, 0};
  for (auto [a, b] : std::vector<std::pair<int, int>>{{1, 2}, {2, 3}, {0, 1}, {0, 5}, {5, 6}, {4, 7}, {3, 0}}) c.push(a, b, p);
  Islands islands;
  build_islands(bodies, c, false, islands);
  REQUIRE(islands.count() == 3);
  REQUIRE(std::vector<int>(islands.bodies.begin() + islands.body_begin[0], islands.bodies.begin() + islands.body_begin[1]) ==
          std::vector<int>{1, 2, 3});
  REQUIRE(std::vector<int>(islands.bodies.begin() + islands.body_begin[1], islands.bodies.begin() + islands.body_begin[2]) ==
          std::vector<int>{5, 6});
  REQUIRE(std::vector<int>(islands.bodies.begin() + islands.body_begin[2], islands.bodies.end()) == std::vector<int>{7});
  REQUIRE(std::vector<int>(islands.contact_order.begin(), islands.contact_order.begin() + islands.contact_begin[1]) ==
          std::vector<int>{0, 1, 2, 6});
  REQUIRE(std::vector<int>(islands.contact_order.begin() + islands.contact_begin[1],
                           islands.contact_order.begin() + islands.contact_begin[2]) == std::vector<int>{3, 4});
  // Body 8 touches nothing: in no island.
  REQUIRE(std::find(islands.bodies.begin(), islands.bodies.end(), 8) == islands.bodies.end());

  Islands one;
  build_islands(bodies, c, true, one);
  REQUIRE(one.count() == 1);
  REQUIRE(one.bodies.size() == 6);
  REQUIRE(one.contact_order.size() == 7);
}

namespace {
// Connected components by breadth-first search: the plain definition the parallel union-find must meet.
std::vector<int> components_by_search(const Bodies& bodies, const Contacts& c) {
  const int n = bodies.size();
  std::vector<std::vector<int>> next(n);
  for (int k = 0; k < c.size(); ++k)
    if (bodies.is_dynamic(c.a[k]) && bodies.is_dynamic(c.b[k])) {
      next[c.a[k]].push_back(c.b[k]);
      next[c.b[k]].push_back(c.a[k]);
    }
  std::vector<int> component(n, -1);
  for (int s = 0; s < n; ++s) {
    if (component[s] >= 0) continue;
    std::vector<int> queue{s};
    component[s] = s;
    for (size_t q = 0; q < queue.size(); ++q)
      for (int t : next[queue[q]])
        if (component[t] < 0) component[queue.emplace_back(t)] = s;
  }
  return component;
}
}  // namespace

TEST_CASE("islands: the threads' union-find finds the connected components, the same for any thread count", "[islands]") {
  // Many small chains and a few large clusters among 20,000 bodies, one in ten fixed, the contacts in
  // random order: many threads unite concurrently in the same sets (8 threads, also on 2 cores).
  Scene s;
  Shape sphere;
  sphere.type = ShapeType::sphere;
  sphere.radius = 1;
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    s.bodies.push_back(make_body(std::to_string(i), sphere, {0, 0, 0}, i % 10 == 0 ? BodyKind::fixed : BodyKind::dynamic));
  Bodies bodies = Bodies::from_scene(s);
  std::mt19937 rng(7);
  Contacts c;
  ContactPoint<double> p{{0, 0, 0}, {0, 0, 1}, 0.0, 0};
  for (int k = 0; k < 30000; ++k) {
    const int a = int(rng() % n), span = k % 3 == 0 ? n : 50;
    const int b = (a + 1 + int(rng() % span)) % n;
    if (bodies.is_dynamic(a) || bodies.is_dynamic(b)) c.push(a, b, p);
  }
  const std::vector<int> component = components_by_search(bodies, c);
  const int threads = omp_get_max_threads();
  Islands one_thread, many;
  omp_set_num_threads(1);
  build_islands(bodies, c, false, one_thread);
  omp_set_num_threads(8);
  build_islands(bodies, c, false, many);
  omp_set_num_threads(threads);
  REQUIRE(many.contact_order == one_thread.contact_order);
  REQUIRE(many.contact_begin == one_thread.contact_begin);
  REQUIRE(many.bodies == one_thread.bodies);
  REQUIRE(many.body_begin == one_thread.body_begin);
  REQUIRE(many.count() > 100);
  // Every contact (each touches a dynamic body) lies in exactly one island.
  REQUIRE(many.contact_begin.back() == c.size());
  std::vector<int> order = many.contact_order;
  std::sort(order.begin(), order.end());
  REQUIRE(std::adjacent_find(order.begin(), order.end()) == order.end());
  // Each island is one whole component, ordered by its smallest body.
  std::vector<char> seen(n, 0);
  int previous_first = -1;
  for (int i = 0; i < many.count(); ++i) {
    const int first = many.bodies[many.body_begin[i]];
    REQUIRE(first > previous_first);
    previous_first = first;
    int size = 0;
    for (int q = many.body_begin[i]; q < many.body_begin[i + 1]; ++q) {
      REQUIRE(component[many.bodies[q]] == component[first]);
      REQUIRE(!seen[many.bodies[q]]);
      seen[many.bodies[q]] = 1;
      ++size;
    }
    REQUIRE(size == std::count(component.begin(), component.end(), component[first]));
    for (int q = many.contact_begin[i]; q < many.contact_begin[i + 1]; ++q) {
      const int k = many.contact_order[q];
      REQUIRE(component[bodies.is_dynamic(c.a[k]) ? c.a[k] : c.b[k]] == component[first]);
    }
  }
}
