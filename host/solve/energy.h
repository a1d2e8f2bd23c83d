// Mechanical energy and momentum of the dynamic bodies: summaries and long-run drift checks.
#pragma once

#include "step/bodies.h"

namespace stagger {

double kinetic_energy(const Bodies& bodies);                  // translational + rotational, J
double potential_energy(const Bodies& bodies, Vec3d gravity);  // -m g.x, J (zero at the origin)
Vec3d linear_momentum(const Bodies& bodies);

}  // namespace stagger
