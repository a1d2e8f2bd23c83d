// Bit-exact fingerprints: the checkpoint's checksum and the per-step state hash `stagger run --hash`
// prints, with which two runs are compared step by step (determinism, restart).
#pragma once

#include <cstddef>
#include <cstdint>

#include "step/bodies.h"

namespace stagger {

// FNV-1a 64 of raw bytes, continued from `seed` (the previous call's result).
std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t seed = 14695981039346656037ull);

// Hash of every body's position, orientation and velocities, bit for bit.
std::uint64_t state_hash(const Bodies& bodies);

}  // namespace stagger
