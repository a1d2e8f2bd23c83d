// What the narrow phase produces per touching (or about to touch) pair.
#pragma once

#include <stdint.h>

#include "vec.h"

namespace stagger {

// A pair yields at most this many contacts (a box's 8 corners on a plane; clipped box faces are
// reduced to 4).
constexpr int kMaxPairContacts = 8;

template <class T>
struct ContactPoint {
  Vec3<T> point;    // midway between the two surfaces
  Vec3<T> normal;   // unit, from B into A
  T gap;            // signed distance along the normal; negative = overlap
  uint32_t feature; // stable id of the features that touch, for warm starting
};

}  // namespace stagger
