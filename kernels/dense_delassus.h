// The Delassus operator of a small island as a dense matrix, for the dense path of the batched solve
// (host/solve/dense_islands.h): W maps the world impulses of the island's contacts (3 per contact, in
// contact order) to the relative velocities they cause at its contacts (world frame). Assembled once
// per solve; each APGD iteration is then one matrix-vector product per island (cuBLAS on the GPU)
// instead of the gather/scatter pair of kernels/delassus.h. Working with world impulses keeps the
// matrix the same for the cone and for every pyramid: the friction rows are read off the product.
#pragma once

#include "delassus.h"

namespace stagger {

// Column j (world axis j) of the 3x3 block W_kl: the relative velocity at contact k caused by a unit
// world impulse along axis j on contact l. Every body the two contacts share contributes
// s_k s_l (m^-1 e_j + (I^-1 (r_l x e_j)) x r_k), with s = +1 on side A, -1 on side B.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Vec3<T> delassus_block_column(const P& p, int k, int l, int j) {
  const Vec3<T> e{T(j == 0), T(j == 1), T(j == 2)};
  const int slots_k[2] = {p.slot_a[k], p.slot_b[k]}, slots_l[2] = {p.slot_a[l], p.slot_b[l]};
  const Vec3<T> levers_k[2] = {p.r_a[k], p.r_b[k]}, levers_l[2] = {p.r_a[l], p.r_b[l]};
  Vec3<T> column = zero3<T>();
  for (int sk = 0; sk < 2; ++sk) {
    const int s = slots_k[sk];
    if (s < 0) continue;
    for (int sl = 0; sl < 2; ++sl) {
      if (slots_l[sl] != s) continue;
      const T sign = sk == sl ? T(1) : T(-1);
      const Vec3<T> spin = p.inv_inertia[s] * cross(levers_l[sl], e);
      column += sign * (p.inv_mass[s] * e + cross(spin, levers_k[sk]));
    }
  }
  return column;
}

// Contact k's velocity in its frame (n.w, t1.w, t2.w) from the dense product: `free` is the frame
// velocity of the predictor (contact_velocity at u^p) and `product` the world relative velocity W x.
template <class P, class T = typename P::Real>
STAGGER_HD STAGGER_INLINE Vec3<T> dense_contact_velocity(const P& p, int k, Vec3<T> free,
                                                         Vec3<T> product) {
  return {free.x + dot(p.normal[k], product), free.y + dot(p.tangent1[k], product),
          free.z + dot(p.tangent2[k], product)};
}

}  // namespace stagger
