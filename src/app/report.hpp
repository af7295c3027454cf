// Text formatting of a run's results: byte counts, the buffer plan, the check table.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

std::string human_bytes(int64_t bytes);
// Tensor ids by name, built once (Graph::find_tensor is a linear search).
std::unordered_map<std::string_view, TensorId> tensor_ids(const Graph& g);
void print_plan(std::ostream& out, const Graph& g, const BufferPlan& plan);
// "1.5", or "inf (non-finite)" / "NaN (non-finite)".
std::string value_text(double v);
void print_checks(std::ostream& out, const Graph& g, const std::vector<OutputCheck>& checks);

}  // namespace gexec
