// Islands: connected components of dynamic bodies, never joined through fixed ones; contacts and
// bodies grouped by island in increasing order.
#include <catch2/catch.hpp>

#include "helpers.h"

#include <algorithm>

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
