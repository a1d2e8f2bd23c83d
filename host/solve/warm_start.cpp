#include "solve/warm_start.h"

#include <parallel/algorithm>

#include <algorithm>

#include "step/parallel.h"

namespace stagger {

void WarmStartCache::assign(std::vector<Entry> entries) {
  // Sort 16-byte keys (pair; feature and position), not the 96-byte entries, in parallel, then
  // gather. The position makes every key unique, so the order does not depend on the sort
  // algorithm or the thread count (equal (pair, feature) entries keep their relative order).
  struct Key {
    std::uint64_t pair, rest;
    bool operator<(const Key& o) const { return pair != o.pair ? pair < o.pair : rest < o.rest; }
  };
  const int n = int(entries.size());
  std::vector<Key> keys(n);
  parallel_for(n, [&](int i) {
    keys[i] = Key{(std::uint64_t(std::uint32_t(entries[i].a)) << 32) | std::uint32_t(entries[i].b),
                  (std::uint64_t(entries[i].feature) << 32) | std::uint64_t(i)};
  });
  __gnu_parallel::sort(keys.begin(), keys.end());
  entries_.resize(n);
  parallel_for(n, [&](int i) { entries_[i] = entries[keys[i].rest & 0xffffffffu]; });
}

const WarmStartCache::Entry* WarmStartCache::find(int a, int b, std::uint32_t feature, Vec3d point,
                                                  double max_distance) const {
  Entry key{a, b, 0, {}, 0, {}, 0, 0};
  auto first = std::lower_bound(entries_.begin(), entries_.end(), key);
  const Entry* nearest = nullptr;
  double best = max_distance * max_distance;
  for (auto it = first; it != entries_.end() && it->a == a && it->b == b; ++it) {
    if (it->feature == feature) return &*it;
    double d2 = norm2(it->point - point);
    if (d2 <= best) {
      best = d2;
      nearest = &*it;
    }
  }
  return nearest;
}

}  // namespace stagger
