#include "output/state_hash.h"

namespace stagger {

std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t state_hash(const Bodies& bodies) {
  const std::size_t n = std::size_t(bodies.size());
  std::uint64_t h = fnv1a64(bodies.x.data(), n * sizeof(Vec3d));
  h = fnv1a64(bodies.q.data(), n * sizeof(Quatd), h);
  h = fnv1a64(bodies.v.data(), n * sizeof(Vec3d), h);
  return fnv1a64(bodies.w.data(), n * sizeof(Vec3d), h);
}

}  // namespace stagger
