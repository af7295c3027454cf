// Host-side initialisation of graph inputs: the bytes of a tensor from its init and the seed.
#pragma once

#include <cstdint>
#include <vector>

#include "gexec/ir/tensor.hpp"
#include "gexec/rng/init_value.hpp"

namespace gexec {

// The effective init of a graph input: its own, or normal(0, 1) when none is written.
Init effective_init(const Tensor& t);

// The device-drawable parameters of a random or constant init (not values or file).
bool is_drawn(const Init& init);
rng::DrawParams draw_params(const Init& init, uint64_t seed, const Tensor& t);

// The tensor's values as stored bytes (numel * dtype size), rounded once to its dtype.
// Multithreaded for large tensors; the bits depend only on (seed, name, init, index).
std::vector<uint8_t> generate_input(const Tensor& t, uint64_t seed);

}  // namespace gexec
