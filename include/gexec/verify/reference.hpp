// The CPU reference: runs the graph as loaded, op by op, in double, from the device's inputs.
// It shares no arithmetic with any backend.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

// A tensor's reference values in storage order, and per element an error scale: a bound on
// the magnitude of the values that produced it (for a product, sum |a_ik * b_kj|), so that
// rounding differences of any correct implementation stay under rtol * scale.
struct RefTensor {
  std::vector<double> value;
  std::vector<double> scale;
};

// `inputs` holds the stored bytes of every graph input, by name. Each op's result is rounded
// to its output dtype, as a device stores it. Returns the graph's outputs.
Result<std::map<std::string, RefTensor>> run_reference(const Graph& g,
                                                       const std::map<std::string, std::vector<uint8_t>>& inputs);

}  // namespace gexec
