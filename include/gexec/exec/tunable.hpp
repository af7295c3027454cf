// What a kernel offers the autotuner (src/tune/): interchangeable variants, a signature for the
// tuning cache, and rebinding onto other buffers. Kernels without variants do not implement it.
#pragma once

#include <string>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

// The device addresses of an op's operands, in the op's input and output order.
struct Binding {
  std::vector<void*> inputs, outputs;
  std::vector<void*> scales;  // S of each block scale the op reads: scale_reads(g, op)'s order
};

class Tunable {
 public:
  virtual ~Tunable() = default;
  // Interchangeable implementations of the op (all within the output's tolerance), variant 0
  // being the default choice. Selected after prepare(), before run().
  virtual int variant_count() const = 0;
  virtual int selected_variant() const = 0;
  virtual Status select_variant(int i) = 0;
  // A variant in words that identify it across processes (a tuning cache stores it).
  virtual std::string variant_name(int i) const = 0;
  // What identifies the problem for a tuning cache (shape, dtypes, ...); empty: not cached.
  virtual std::string signature() const = 0;
  // For timing on rotating buffers: points the runs at other buffers for the op's operands (the
  // same tensors' sizes, addresses aligned at least as the originals'). Operands that prepare()
  // consumed (converted or padded constants) or fixed in a plan may keep their buffers. False,
  // changing nothing, where the kernel cannot be rebound.
  virtual bool rebind(const Binding& b) = 0;
};

}  // namespace gexec
