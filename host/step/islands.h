// Contact islands (SOLVER.md step 3): connected components of dynamic bodies linked by contacts.
// Fixed and kinematic bodies never join two islands. Built on the host by design (a union-find,
// shared by the host's threads).
#pragma once

#include <vector>

#include "step/bodies.h"
#include "collide/narrowphase.h"

namespace stagger {

struct Islands {
  std::vector<int> contact_order;  // contact indices grouped by island, increasing within one
  std::vector<int> contact_begin{0};
  std::vector<int> bodies;         // dynamic bodies that touch something, grouped by island
  std::vector<int> body_begin{0};
  int count() const { return int(contact_begin.size()) - 1; }
};

// `single_island` puts every contact into one island (tests: islands must not change the answer).
void build_islands(const Bodies& bodies, const Contacts& contacts, bool single_island, Islands& out);

}  // namespace stagger
