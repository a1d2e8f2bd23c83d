// Warm-start matching (SOLVER.md): a contact takes the impulses of the previous step's contact of the
// same body pair with the same feature key, else of the nearest previous contact of that pair within
// the matching distance, else none. Checked against a direct search of every entry by that rule, on
// random caches: the cache's pair index must not change which entry is found.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "solve/warm_start.h"

using namespace stagger;

namespace {

// The rule, read off every entry of the sorted cache: the first entry of the pair with the
// feature; else, over the pair's entries in order, the last one at the smallest distance within max.
const WarmStartCache::Entry* find_directly(const std::vector<WarmStartCache::Entry>& entries, int a, int b,
                                           std::uint32_t feature, Vec3d point, double max_distance) {
  for (const auto& e : entries)
    if (e.a == a && e.b == b && e.feature == feature) return &e;
  const WarmStartCache::Entry* nearest = nullptr;
  double best = max_distance * max_distance;
  for (const auto& e : entries) {
    if (e.a != a || e.b != b) continue;
    const double d2 = norm2(e.point - point);
    if (d2 <= best) {
      best = d2;
      nearest = &e;
    }
  }
  return nearest;
}

}  // namespace

TEST_CASE("warm start: the pair index finds the entry the matching rule names", "[warm_start]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    // Few bodies, so that pairs repeat (several contacts per pair) and many pairs collide in the table.
    const int bodies = 2 + trial % 30;
    const int n = int(unit(rng) * 400);
    std::uniform_int_distribution<int> body(0, bodies - 1), feature(0, 3);
    std::vector<WarmStartCache::Entry> entries;
    for (int i = 0; i < n; ++i) {
      int a = body(rng), b = body(rng);
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      entries.push_back(WarmStartCache::Entry{a, b, std::uint32_t(feature(rng)),
                                              Vec3d{unit(rng), unit(rng), unit(rng)}, double(i), {}, 0, 0});
    }
    WarmStartCache cache;
    cache.assign(entries);
    const std::vector<WarmStartCache::Entry>& sorted = cache.entries();
    REQUIRE(sorted.size() == entries.size());
    REQUIRE(std::is_sorted(sorted.begin(), sorted.end()));
    for (int q = 0; q < 300; ++q) {
      int a = body(rng), b = body(rng);
      if (a > b) std::swap(a, b);
      const std::uint32_t f = std::uint32_t(feature(rng)) + (q % 3 == 0 ? 10u : 0u);  // some features unseen
      const Vec3d point{unit(rng), unit(rng), unit(rng)};
      const double max_distance = 0.5 * unit(rng);
      const WarmStartCache::Entry* expected = find_directly(sorted, a, b, f, point, max_distance);
      const WarmStartCache::Entry* found = cache.find(a, b, f, point, max_distance);
      REQUIRE(found == expected);
    }
    // A cache put back from its entries (a resumed run) finds the same.
    WarmStartCache restored;
    restored.restore(sorted);
    for (int q = 0; q < 50; ++q) {
      int a = body(rng), b = body(rng);
      if (a > b) std::swap(a, b);
      const std::uint32_t f = std::uint32_t(feature(rng));
      const Vec3d point{unit(rng), unit(rng), unit(rng)};
      const WarmStartCache::Entry* e = restored.find(a, b, f, point, 0.3);
      const WarmStartCache::Entry* expected = find_directly(restored.entries(), a, b, f, point, 0.3);
      REQUIRE(e == expected);
    }
  }
  WarmStartCache empty;
  CHECK(empty.find(0, 1, 0, Vec3d{0, 0, 0}, 1.0) == nullptr);
}
