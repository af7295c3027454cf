// The generic selector: for each op, the first kernel by priority that accepts it, and why
// every other candidate was turned down.
#pragma once

#include <string>
#include <vector>

#include "gexec/kernels/kernel_def.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct Rejection {
  std::string kernel;
  std::string reason;
};

struct OpChoice {
  const KernelDef* kernel = nullptr;
  std::vector<std::string> notes;
  std::vector<Rejection> rejected;
};

struct Selection {
  Backend backend = Backend::cuda;
  std::vector<OpChoice> ops;  // one per op of the graph, same order
  KernelOptions options;      // as selected with; the kernels are prepared with the same
};

// bad_input (listing each candidate's reason) when some op has no kernel on this backend.
Result<Selection> select_kernels(const Graph& g, const DeviceCaps& caps, Backend backend,
                                 const KernelOptions& options = {});

// One line per op with its kernel, then indented notes and rejections.
std::string print_selection(const Graph& g, const Selection& s);

}  // namespace gexec
