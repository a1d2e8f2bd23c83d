// The last step's contacts with their impulses, in world coordinates: what VTK frames draw and the
// public API returns.
#pragma once

#include <vector>

#include "step/world.h"

namespace stagger {

// One entry per contact the solve saw (none before the first step). The impulse on body a is
// normal_impulse * normal + friction_impulse; the normal points from b into a.
struct SolvedContacts {
  std::vector<int> a, b;
  std::vector<Vec3d> point, normal, friction_impulse;
  std::vector<double> normal_impulse, gap;
};

SolvedContacts solved_contacts(const World& world);

}  // namespace stagger
