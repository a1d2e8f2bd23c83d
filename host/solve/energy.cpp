#include "solve/energy.h"

namespace stagger {

double kinetic_energy(const Bodies& b) {
  double e = 0;
  for (int i = 0; i < b.size(); ++i) {
    if (!b.is_dynamic(i)) continue;
    Vec3d wb = rotate_inverse(b.inertia_frame(i), b.w[i]);
    e += 0.5 * norm2(b.v[i]) / b.inv_mass[i] + 0.5 * dot(wb, cwise_mul(b.inertia_body[i], wb));
  }
  return e;
}

double potential_energy(const Bodies& b, Vec3d gravity) {
  double e = 0;
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) e -= dot(gravity, b.x[i]) / b.inv_mass[i];
  return e;
}

Vec3d linear_momentum(const Bodies& b) {
  Vec3d p{0, 0, 0};
  for (int i = 0; i < b.size(); ++i)
    if (b.is_dynamic(i)) p += (1.0 / b.inv_mass[i]) * b.v[i];
  return p;
}

}  // namespace stagger
