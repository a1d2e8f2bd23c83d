// Impulses of the previous step, matched to this step's contacts by body pair and feature key
// (falling back to the nearest previous contact point of the same pair), as SOLVER.md asks.
#pragma once

#include <cstdint>
#include <vector>

#include "scene/scene.h"

namespace stagger {

class WarmStartCache {
 public:
  struct Entry {
    int a, b;
    std::uint32_t feature;
    Vec3d point;
    double alpha;
    Vec3d friction;  // world-frame friction impulse, so a new tangent basis can take it over
    double lipschitz_contact, lipschitz_friction;
    bool operator<(const Entry& o) const {
      if (a != o.a) return a < o.a;
      if (b != o.b) return b < o.b;
      return feature < o.feature;
    }
  };

  // Replaces the cache by this step's entries.
  void assign(std::vector<Entry> entries);
  // The same, and hands the previous entries back in `entries`, whose storage the caller reuses.
  void exchange(std::vector<Entry>& entries);
  // The previous contact of pair (a, b) with this feature, else the nearest one within max_distance.
  // hint: where the pair's entries may be (the same index last step): when right, the lookup reads
  // the entries in order instead of probing the table at random (a resting bed's contacts keep their
  // places); the answer does not depend on it.
  const Entry* find(int a, int b, std::uint32_t feature, Vec3d point, double max_distance, int hint = -1) const;
  // Puts back entries taken from entries() (grouped by pair: kept in their order, so that a restored
  // world continues bit-identically).
  void restore(std::vector<Entry> entries);
  const std::vector<Entry>& entries() const { return entries_; }
  void clear() { restore({}); }
  std::size_t size() const { return entries_.size(); }

 private:
  // Where each body pair's entries begin: an open-addressing table of (pair, first entry) with at
  // least twice as many slots as pairs, so that find() costs one probe or two instead of a binary
  // search whose every step misses the cache (the lookups were 4% of the demo bed's step). Filled in
  // parallel: where a pair lands depends on the threads' timing, what find() answers does not.
  struct Slot {
    std::uint64_t pair;  // kEmpty: empty
    int first;
  };
  // No contact has a = b = -1 (a contact has a body), so this key is free to mark an empty slot.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
  bool index_pairs();     // false (and incomplete) when some pair's entries are not together
  void sort_and_index();  // entries_ sorted by pair, feature and position, then indexed
  std::vector<Entry> entries_;
  std::vector<Slot> slots_;
};

}  // namespace stagger
