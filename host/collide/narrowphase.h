// Narrow phase: the contacts of every candidate pair, in pair order.
#pragma once

#include <cstdint>
#include <vector>

#include "step/bodies.h"
#include "collide/broadphase.h"
#include "kernels/contact_point.h"

namespace stagger {

// Contacts of one step in structure-of-arrays form (all bodies' indices are world indices).
struct Contacts {
  std::vector<int> a, b;         // normal points from b into a
  std::vector<Vec3d> point, normal;
  std::vector<double> gap;
  std::vector<std::uint32_t> feature;

  int size() const { return int(a.size()); }
  void clear();
  void push(int body_a, int body_b, const ContactPoint<double>& c);
  // Appends `more`'s contacts after these.
  void append(const Contacts& more);
  // The points, normals, gaps and features of `points` (a, b set apart), on the host's threads.
  void assign_points(const std::vector<ContactPoint<double>>& points);
};

void narrowphase(const Bodies& bodies, const std::vector<BodyPair>& pairs, const ContactMargins& margins, Contacts& out);

}  // namespace stagger
