#include "step/islands.h"

#include <numeric>

namespace stagger {

namespace {

struct UnionFind {
  std::vector<int> parent, rank;
  explicit UnionFind(int n) : parent(n), rank(n, 0) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int i) {
    while (parent[i] != i) {
      parent[i] = parent[parent[i]];  // path halving
      i = parent[i];
    }
    return i;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (rank[a] < rank[b]) std::swap(a, b);
    parent[b] = a;
    if (rank[a] == rank[b]) ++rank[a];
  }
};

}  // namespace

void build_islands(const Bodies& bodies, const Contacts& contacts, bool single_island, Islands& out) {
  const int n = bodies.size(), nc = contacts.size();
  UnionFind uf(n);
  std::vector<char> touched(n, 0);
  int first_dynamic = -1;
  for (int k = 0; k < nc; ++k) {
    int a = contacts.a[k], b = contacts.b[k];
    bool da = bodies.is_dynamic(a), db = bodies.is_dynamic(b);
    if (da) touched[a] = 1;
    if (db) touched[b] = 1;
    if (da && db) uf.unite(a, b);
    int d = da ? a : b;
    if (single_island) {
      if (first_dynamic < 0) first_dynamic = d;
      uf.unite(first_dynamic, d);
    }
  }
  // Island ids in order of each island's smallest body index: independent of contact order.
  std::vector<int> island_of_root(n, -1), island_of_body(n, -1);
  int islands = 0;
  for (int i = 0; i < n; ++i) {
    if (!touched[i]) continue;
    int r = uf.find(i);
    if (island_of_root[r] < 0) island_of_root[r] = islands++;
    island_of_body[i] = island_of_root[r];
  }
  // Counting sort of bodies and contacts by island (stable: increasing index within an island).
  out.body_begin.assign(islands + 1, 0);
  out.contact_begin.assign(islands + 1, 0);
  std::vector<int> contact_island(nc);
  for (int i = 0; i < n; ++i)
    if (island_of_body[i] >= 0) ++out.body_begin[island_of_body[i] + 1];
  for (int k = 0; k < nc; ++k) {
    int d = bodies.is_dynamic(contacts.a[k]) ? contacts.a[k] : contacts.b[k];
    contact_island[k] = island_of_body[d];
    ++out.contact_begin[contact_island[k] + 1];
  }
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
