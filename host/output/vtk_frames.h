// Frames for ParaView: VTK XML PolyData (ASCII), one file of bodies and one of contacts per frame,
// and .pvd collections that list them with their times (docs/outputs.md, "Frames").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "step/world.h"

namespace stagger {

// One vertex per body at its centre, with velocity, angular_velocity, orientation (w, x, y, z),
// shape (0 sphere, 1 box, 2 plane), size (radius, or the box's full edge lengths), kind
// (0 dynamic, 1 fixed, 2 kinematic) and index (scene order).
std::string bodies_vtp(const Bodies& bodies);
// One vertex per contact of the world's last step, at the contact point, with force (the solved
// impulse divided by h, acting on body a), normal (from b into a), normal_force, gap, body_a, body_b.
std::string contacts_vtp(const World& world);
// A ParaView collection of (time, file) entries.
std::string pvd_collection(const std::vector<std::pair<double, std::string>>& entries);

std::string bodies_vtp_name(std::int64_t step);
std::string contacts_vtp_name(std::int64_t step);

}  // namespace stagger
