// The value of one element of a randomly initialised input, identical on the host and the device.
#pragma once

#include <cstdint>

#include "gexec/ir/hd.hpp"
#include "gexec/rng/sample.hpp"

namespace gexec::rng {

enum class Dist : int { normal = 0, uniform = 1, zeros = 2, ones = 3 };

// What a device kernel needs to draw a tensor's values (no strings, no vectors).
struct DrawParams {
  Dist dist = Dist::normal;
  double a = 0.0, b = 1.0;  // normal: mean, std; uniform: low, high
  uint64_t key = 0;         // tensor_key(seed, name)
};

// The element before rounding; `index` counts elements in storage order.
GEXEC_HD inline double draw(const DrawParams& p, uint64_t index) {
  switch (p.dist) {
    case Dist::normal: return fma(p.b, normal(p.key, index), p.a);
    case Dist::uniform: return uniform(p.key, index, p.a, p.b);
    case Dist::zeros: return 0.0;
    case Dist::ones: return 1.0;
  }
  return 0.0;
}

}  // namespace gexec::rng
