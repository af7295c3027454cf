// Philox4x32-10 counter-based generator, and the key derived from (seed, tensor name).
// Header-only and GEXEC_HD so that the CUDA backend draws the very same bits on the device.
#pragma once

#include <cstdint>
#include <string_view>

#include "gexec/ir/hd.hpp"

namespace gexec::rng {

struct U32x4 {
  uint32_t v[4];
};

GEXEC_HD inline uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t* hi) {
  uint64_t p = uint64_t(a) * uint64_t(b);
  *hi = uint32_t(p >> 32);
  return uint32_t(p);
}

// Ten rounds of Philox4x32 (Salmon et al., SC'11) on counter c with key (k0, k1).
GEXEC_HD inline U32x4 philox4x32(U32x4 c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo(0xD2511F53u, c.v[0], &hi0);
    uint32_t lo1 = mulhilo(0xCD9E8D57u, c.v[2], &hi1);
    c = U32x4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// FNV-1a of the tensor name mixed with the seed: the key does not depend on tensor order.
inline uint64_t tensor_key(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  // splitmix64 finaliser over seed ^ h so that nearby seeds give unrelated keys
  uint64_t z = seed ^ (h + 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace gexec::rng
