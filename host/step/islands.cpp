#include "step/islands.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <utility>

#include "step/parallel.h"

namespace stagger {

namespace {

// Union-find shared by the threads: a root is linked under the smaller of two roots by
// compare-and-swap, so each set's root is its smallest body index whatever order the threads unite
// in, and the islands come out the same (Anderson and Woll's lock-free union-find, without ranks).
class ConcurrentUnionFind {
 public:
  explicit ConcurrentUnionFind(int n) : parent_(n) {
    parallel_for(n, [&](int i) { parent_[i] = i; });
  }
  int find(int i) {
    for (;;) {
      int p = load(i);
      if (p == i) return i;
      int g = load(p);
      if (g != p) std::atomic_ref<int>(parent_[i]).compare_exchange_weak(p, g, std::memory_order_relaxed);  // halving
      i = g;
    }
  }
  void unite(int a, int b) {
    for (;;) {
      a = find(a);
      b = find(b);
      if (a == b) return;
      if (a < b) std::swap(a, b);
      int root = a;  // a is still a root: link it under the smaller root b
      if (std::atomic_ref<int>(parent_[a]).compare_exchange_strong(root, b, std::memory_order_relaxed)) return;
    }
  }

 private:
  int load(int i) { return std::atomic_ref<int>(parent_[i]).load(std::memory_order_relaxed); }
  std::vector<int> parent_;
};

}  // namespace

void build_islands(const Bodies& bodies, const Contacts& contacts, bool single_island, Islands& out) {
  // In parallel but for two sequential scans: on the GPU's resident step this stage is host time
  // the device waits for (5 ms a step at 309k contacts, 56 ms at 3M, serial on a 16-core host).
  assert(!in_team());  // its serial parts would run on every thread of a team
  const int n = bodies.size(), nc = contacts.size();
  ConcurrentUnionFind uf(n);
  std::vector<char> touched(n, 0);
  const auto dynamic_body = [&](int k) { return bodies.is_dynamic(contacts.a[k]) ? contacts.a[k] : contacts.b[k]; };
  parallel_for(nc, [&](int k) {
    const int a = contacts.a[k], b = contacts.b[k];
    const bool da = bodies.is_dynamic(a), db = bodies.is_dynamic(b);
    if (da) std::atomic_ref<char>(touched[a]).store(1, std::memory_order_relaxed);
    if (db) std::atomic_ref<char>(touched[b]).store(1, std::memory_order_relaxed);
    if (da && db && !single_island) uf.unite(a, b);
  });
  // Island ids in order of each island's smallest body index (its root): independent of contact
  // order. `single_island` puts every touched body into island 0 (tests: islands must not change
  // the answer).
  std::vector<int> root(n), island_of_root(n, -1), island_of_body(n, -1);
  parallel_for(n, [&](int i) { root[i] = touched[i] ? uf.find(i) : -1; });
  int islands = 0;
  for (int i = 0; i < n; ++i)
    if (root[i] == i) island_of_root[i] = islands++;
  if (single_island) islands = std::min(islands, 1);
  parallel_for(n, [&](int i) {
    if (root[i] >= 0) island_of_body[i] = single_island ? 0 : island_of_root[root[i]];
  });
  // Counting sort of bodies and contacts by island (stable: increasing index within an island).
  std::vector<int> contact_island(nc);
  parallel_for(nc, [&](int k) { contact_island[k] = island_of_body[dynamic_body(k)]; });
  out.body_begin.assign(islands + 1, 0);
  out.contact_begin.assign(islands + 1, 0);
  for (int i = 0; i < n; ++i)
    if (island_of_body[i] >= 0) ++out.body_begin[island_of_body[i] + 1];
  for (int k = 0; k < nc; ++k) ++out.contact_begin[contact_island[k] + 1];
  for (int i = 0; i < islands; ++i) {
    out.body_begin[i + 1] += out.body_begin[i];
    out.contact_begin[i + 1] += out.contact_begin[i];
  }
  out.bodies.assign(out.body_begin.back(), -1);
  out.contact_order.assign(nc, -1);
  std::vector<int> fill(out.body_begin.begin(), out.body_begin.end() - 1);
  for (int i = 0; i < n; ++i)
    if (island_of_body[i] >= 0) out.bodies[fill[island_of_body[i]]++] = i;
  fill.assign(out.contact_begin.begin(), out.contact_begin.end() - 1);
  for (int k = 0; k < nc; ++k) out.contact_order[fill[contact_island[k]]++] = k;
}

}  // namespace stagger
