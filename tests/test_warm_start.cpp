// Warm-start matching (SOLVER.md): a contact takes the impulses of the previous step's contact of the
// same body pair with the same feature key, else of the nearest previous contact of that pair within
// the matching distance, else none. Checked against a direct search of every entry by that rule, on
// random caches: the cache's pair index, and the order of a pair's entries, must not change which
// entry is found.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <random>
#include <vector>

#include "solve/contact_problem.h"
#include "solve/warm_start.h"

using namespace stagger;

namespace {

// The rule, read off every entry of the sorted entries: the first entry of the pair with the
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
  // Eight threads, also on two cores: the large caches fill their pair index concurrently.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(8);
  WarmStartCache reused;  // takes each trial's entries by exchange: a table that grows and shrinks
  for (int trial = 0; trial < 40; ++trial) {
    // Few bodies, so that pairs repeat (several contacts per pair) and many pairs collide in the
    // table; every fifth cache large (thousands of pairs, indexed on the threads).
    const bool large = trial % 5 == 4;
    const int bodies = large ? 150 : 2 + trial % 30;
    const int n = int(unit(rng) * (large ? 8000 : 400));
    std::uniform_int_distribution<int> body(0, bodies - 1), feature(0, 3);
    std::vector<WarmStartCache::Entry> entries;
    for (int i = 0; i < n; ++i) {
      int a = body(rng), b = body(rng);
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      entries.push_back(WarmStartCache::Entry{a, b, std::uint32_t(feature(rng)),
                                              Vec3d{unit(rng), unit(rng), unit(rng)}, double(i), {}, 0, 0});
    }
    // The rule is read off the entries sorted by pair and feature (equal keys in their order);
    // entries are told apart by alpha, their index. Few bodies put a random cache's pairs together
    // (kept as they come), more split them (sorted by the cache).
    std::vector<WarmStartCache::Entry> sorted = entries;
    std::stable_sort(sorted.begin(), sorted.end());
    const auto same = [](const WarmStartCache::Entry* x, const WarmStartCache::Entry* y) {
      return x == nullptr ? y == nullptr : y != nullptr && x->alpha == y->alpha;
    };
    WarmStartCache cache;
    cache.assign(entries);
    REQUIRE(cache.entries().size() == entries.size());
    for (int q = 0; q < 300; ++q) {
      int a = body(rng), b = body(rng);
      if (a > b) std::swap(a, b);
      const std::uint32_t f = std::uint32_t(feature(rng)) + (q % 3 == 0 ? 10u : 0u);  // some features unseen
      const Vec3d point{unit(rng), unit(rng), unit(rng)};
      const double max_distance = 0.5 * unit(rng);
      const WarmStartCache::Entry* expected = find_directly(sorted, a, b, f, point, max_distance);
      REQUIRE(same(cache.find(a, b, f, point, max_distance), expected));
    }
    // The same entries grouped by pair but not sorted (as a step's contacts come): kept in their
    // order, and the same entry found (entries are told apart by alpha, their index).
    std::vector<int> first_seen(bodies * bodies, -1);
    for (int i = 0; i < int(entries.size()); ++i) {
      int& f = first_seen[entries[i].a * bodies + entries[i].b];
      if (f < 0) f = i;
    }
    std::vector<WarmStartCache::Entry> grouped = entries;
    std::stable_sort(grouped.begin(), grouped.end(), [&](const auto& x, const auto& y) {
      return first_seen[x.a * bodies + x.b] < first_seen[y.a * bodies + y.b];
    });
    WarmStartCache as_they_come;
    as_they_come.assign(grouped);
    REQUIRE(as_they_come.entries().size() == grouped.size());
    for (std::size_t i = 0; i < grouped.size(); ++i) REQUIRE(as_they_come.entries()[i].alpha == grouped[i].alpha);
    std::vector<WarmStartCache::Entry> handed = grouped;
    reused.exchange(handed);
    REQUIRE(reused.entries().size() == grouped.size());
    for (int q = 0; q < 300; ++q) {
      int a = body(rng), b = body(rng);
      if (a > b) std::swap(a, b);
      const std::uint32_t f = std::uint32_t(feature(rng)) + (q % 3 == 0 ? 10u : 0u);
      const Vec3d point{unit(rng), unit(rng), unit(rng)};
      const double max_distance = 0.5 * unit(rng);
      const WarmStartCache::Entry* expected = find_directly(sorted, a, b, f, point, max_distance);
      REQUIRE(same(as_they_come.find(a, b, f, point, max_distance), expected));
      REQUIRE(same(reused.find(a, b, f, point, max_distance), expected));
      // A hint, right or wrong, does not change the answer.
      const int n_entries = int(grouped.size());
      for (int hint : {q % (n_entries + 1), n_entries + 3, -1})
        REQUIRE(same(as_they_come.find(a, b, f, point, max_distance, hint), expected));
      for (int hint = 0; hint < n_entries; ++hint)
        if (grouped[hint].a == a && grouped[hint].b == b)
          REQUIRE(same(as_they_come.find(a, b, f, point, max_distance, hint), expected));
    }
    // A cache put back from its entries (a resumed run) finds the same.
    WarmStartCache restored;
    restored.restore(cache.entries());
    for (std::size_t i = 0; i < entries.size(); ++i) REQUIRE(restored.entries()[i].alpha == cache.entries()[i].alpha);
    for (int q = 0; q < 50; ++q) {
      int a = body(rng), b = body(rng);
      if (a > b) std::swap(a, b);
      const std::uint32_t f = std::uint32_t(feature(rng));
      const Vec3d point{unit(rng), unit(rng), unit(rng)};
      REQUIRE(same(restored.find(a, b, f, point, 0.3), find_directly(sorted, a, b, f, point, 0.3)));
    }
  }
  // Equally near entries of other features: the rule of the sorted cache (the last one, the larger
  // feature) in whatever order the pair's entries come.
  const Vec3d p{0.5, 0.5, 0.5}, far{2, 2, 2};
  for (const std::vector<std::uint32_t>& order : {std::vector<std::uint32_t>{2, 1, 3}, {1, 2, 3}, {3, 2, 1}}) {
    std::vector<WarmStartCache::Entry> tied;
    for (std::uint32_t f : order) tied.push_back(WarmStartCache::Entry{0, 1, f, f == 3 ? far : p, double(f), {}, 0, 0});
    WarmStartCache cache;
    cache.assign(tied);
    const WarmStartCache::Entry* e = cache.find(0, 1, 9, Vec3d{0.5, 0.5, 0.6}, 0.5);
    REQUIRE(e != nullptr);
    CHECK(e->feature == 2);
  }
  omp_set_num_threads(threads);
  WarmStartCache empty;
  CHECK(empty.find(0, 1, 0, Vec3d{0, 0, 0}, 1.0) == nullptr);
}

// What "auto" reads to tell a large structure from granular matter (island_settings): per island, the
// magnitudes of the warm start's friction impulses over its normal impulses.
TEST_CASE("warm start: the friction share of an island", "[warm_start]") {
  ContactProblem p;
  p.set_friction_model(FrictionModel::cone, 8);
  p.island_contact_begin = {0, 2, 3};
  REQUIRE(p.warm_friction_share(0) == -1);  // no warm start: unknown
  p.alpha_warm = {1.0, 3.0, 0.0};
  p.beta_warm = {0.3, -0.4, 0.0, 0.0, 0.2, 0.0};  // |(0.3, -0.4)| = 0.5; the third contact pushes not
  REQUIRE(p.warm_friction_share(0) == Approx(0.5 / 4.0));
  REQUIRE(p.warm_friction_share(1) == 0.0);  // nothing pushes yet
  // The pyramid's facet impulses are summed as vectors in the tangent plane: opposite facets cancel.
  p.set_friction_model(FrictionModel::pyramid, 4);  // facets at 90, 180, 270 and 360 degrees
  p.beta_warm.assign(3 * 4, 0.0);
  p.beta_warm[0] = p.beta_warm[2] = 0.7;  // +t2 and -t2
  p.beta_warm[1] = 0.4;                   // -t1
  REQUIRE(p.warm_friction_share(0) == Approx(0.4 / 4.0));
}
