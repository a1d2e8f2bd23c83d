// Spreads 64-bit keys over a power-of-two hash table (splitmix64's finalizer): the broad phase's
// cell keys and the warm start's body pairs, where consecutive numbers would otherwise share slots.
#pragma once

#include <stdint.h>

#include "hd.h"

namespace stagger {

STAGGER_HD STAGGER_INLINE uint64_t mix_key(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace stagger
