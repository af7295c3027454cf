// Text formatting of a run's results: byte counts, the buffer plan, the check table.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

std::string human_bytes(int64_t bytes);
void print_plan(std::ostream& out, const Graph& g, const BufferPlan& plan);
void print_checks(std::ostream& out, const Graph& g, const std::vector<OutputCheck>& checks);

}  // namespace gexec
