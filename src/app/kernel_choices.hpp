// The report's kernels section from a selection: per op of the graph after the passes, the
// kernel chosen and the ones turned down (run_report.cpp; gexec run and the sharded run fill it).
#pragma once

#include <vector>

#include "gexec/app/run_report.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/kernels/select.hpp"

namespace gexec {

std::vector<KernelChoice> kernel_choices(const Graph& g, const Selection& s);

}  // namespace gexec
