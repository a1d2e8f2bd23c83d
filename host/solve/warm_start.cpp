#include "solve/warm_start.h"

#include <parallel/algorithm>

#include <algorithm>
#include <atomic>
#include <cassert>

#include "kernels/mix_key.h"
#include "step/parallel.h"

namespace stagger {

namespace {
std::uint64_t pair_key(int a, int b) { return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b); }
}  // namespace

void WarmStartCache::assign(std::vector<Entry> entries) {
  // A step's contacts come grouped by body pair (the narrowphase writes a pair's contacts together
  // and the islands keep their order): then the entries are indexed as they come. Sorting them
  // instead took most of the warm start's time on large beds (40 ms a step for 309k contacts on 2
  // cores, host time the GPU backend waits for too). find() picks the same entry in either order.
  exchange(entries);
}

void WarmStartCache::exchange(std::vector<Entry>& entries) {
  entries_.swap(entries);
  if (!index_pairs()) sort_and_index();
}

void WarmStartCache::sort_and_index() {
  // Sort 16-byte keys (pair; feature and position), not the 96-byte entries, in parallel, then
  // gather. The position makes every key unique, so the order does not depend on the sort
  // algorithm or the thread count (equal (pair, feature) entries keep their relative order).
  const std::vector<Entry> entries = std::move(entries_);
  struct Key {
    std::uint64_t pair, rest;
    bool operator<(const Key& o) const { return pair != o.pair ? pair < o.pair : rest < o.rest; }
  };
  const int n = int(entries.size());
  std::vector<Key> keys(n);
  parallel_for(n, [&](int i) {
    keys[i] = Key{pair_key(entries[i].a, entries[i].b), (std::uint64_t(entries[i].feature) << 32) | std::uint64_t(i)};
  });
  // A parallel sort only where it pays: below the loop threshold it would wake the threads for
  // a few microseconds of work. The keys are unique, so both sorts give the same order.
  if (n < kParallelThreshold) std::sort(keys.begin(), keys.end());
  else __gnu_parallel::sort(keys.begin(), keys.end());
  entries_.resize(n);
  parallel_for(n, [&](int i) { entries_[i] = entries[keys[i].rest & 0xffffffffu]; });
  index_pairs();
}

void WarmStartCache::restore(std::vector<Entry> entries) {
  entries_ = std::move(entries);
  if (!index_pairs()) sort_and_index();  // only a hand-made state splits a pair
}

bool WarmStartCache::index_pairs() {
  assert(!in_team());  // its serial parts would run on every thread of a team
  static_assert(alignof(Slot) >= std::atomic_ref<std::uint64_t>::required_alignment);
  // In parallel (it was 25 ms a step for 309k contacts on 2 cores, serial, every insertion a cache
  // miss): a slot is claimed by compare-and-swap on its key.
  std::size_t slots = 16;
  while (slots < 2 * entries_.size()) slots *= 2;
  slots_.resize(slots);
  // Threads only where the entries are many: the slots are cheap to clear, and a parallel region
  // for a 2,048-slot table cost more than the clearing on the 16-core GPU host.
  parallel_for(int(slots), [&](int s) { slots_[s] = Slot{kEmpty, -1}; }, (long long)(entries_.size()));
  const std::size_t mask = slots - 1;
  std::atomic<bool> split{false};
  parallel_for(int(entries_.size()), [&](int i) {
    const std::uint64_t key = pair_key(entries_[i].a, entries_[i].b);
    if (i > 0 && pair_key(entries_[i - 1].a, entries_[i - 1].b) == key) return;  // not the pair's first
    if (key == kEmpty) return;  // no body (a hand-made state): never looked up, never indexed
    for (std::size_t s = mix_key(key) & mask;; s = (s + 1) & mask) {
      std::uint64_t seen = kEmpty;
      if (std::atomic_ref<std::uint64_t>(slots_[s].pair).compare_exchange_strong(seen, key, std::memory_order_relaxed)) {
        slots_[s].first = i;  // read only after the loop's barrier
        return;
      }
      if (seen == key) {  // the pair's entries are split
        split.store(true, std::memory_order_relaxed);
        return;
      }
    }
  });
  return !split.load();
}

const WarmStartCache::Entry* WarmStartCache::find(int a, int b, std::uint32_t feature, Vec3d point,
                                                  double max_distance, int hint) const {
  if (slots_.empty()) return nullptr;  // never assigned
  auto first = entries_.begin();
  if (hint >= 0 && hint < int(entries_.size()) && entries_[hint].a == a && entries_[hint].b == b) {
    // The pair's entries are together: its first is at or just before the hint.
    while (hint > 0 && entries_[hint - 1].a == a && entries_[hint - 1].b == b) --hint;
    first += hint;
  } else {
    const std::uint64_t key = pair_key(a, b);
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = mix_key(key) & mask;
    while (slots_[s].pair != kEmpty && slots_[s].pair != key) s = (s + 1) & mask;
    if (slots_[s].pair == kEmpty) return nullptr;  // no contact of this pair in the previous step
    first += slots_[s].first;
  }
  const Entry* nearest = nullptr;
  double best = max_distance * max_distance;
  for (auto it = first; it != entries_.end() && it->a == a && it->b == b; ++it) {
    if (it->feature == feature) return &*it;
    double d2 = norm2(it->point - point);
    // A tie goes to the larger feature, then to the later entry: the rule of the entries sorted by
    // feature, whatever order a pair's entries are in.
    if (d2 < best || (d2 == best && (nearest == nullptr || it->feature >= nearest->feature))) {
      best = d2;
      nearest = &*it;
    }
  }
  return nearest;
}

}  // namespace stagger
