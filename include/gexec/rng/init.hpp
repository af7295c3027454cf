// Host-side initialisation of graph inputs: the bytes of a tensor from its init and the seed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
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

// Graph input t as it is drawn: itself, or, for a block-scaled f8 input, a copy carrying its S's
// values (S being a graph input too): S's bytes from `given` where it names S, else drawn from
// the seed (seed_of(S)).
Tensor drawable_input(const Graph& g, TensorId t, const std::map<std::string, std::vector<uint8_t>>& given,
                      uint64_t seed);

}  // namespace gexec
