#include "warm_start.h"

#include <algorithm>

namespace stagger {

void WarmStartCache::assign(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end());
  entries_ = std::move(entries);
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
