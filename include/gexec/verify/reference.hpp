// The CPU reference: runs the graph as loaded, op by op, in double, from the device's inputs.
// It shares no arithmetic with any backend.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"
#include "gexec/verify/bound.hpp"

namespace gexec {

// A tensor's reference values in storage order and, per element:
//  - scale: the magnitude of the values that produced it (for a product |alpha| sum |a_ik b_kj|
//    + |bias_j|), which bounds every partial sum a kernel's accumulator holds;
//  - var: the variance of (a correct kernel's value - the reference) before this tensor's own
//    rounding: the intermediate roundings carried through the ops, the accumulation error and
//    the TF32 input rounding of the Precision given (bound.hpp).
// `rounded`: whether the op writing the tensor rounds (false for RELU and exact casts, and for
// graph inputs); its rounding adds bound::rounding_var per element.
struct RefTensor {
  std::vector<double> value;
  std::vector<double> scale;
  std::vector<double> var;
  bool rounded = false;
};

// Called now and then with the fraction of the work done, in [0, 1]; may be empty.
using ProgressFn = std::function<void(double done)>;

// `inputs` holds the stored bytes of every graph input, by name. Each op's result is rounded
// to its output dtype, as a device stores it. Returns the graph's outputs.
Result<std::map<std::string, RefTensor>> run_reference(const Graph& g,
                                                       const std::map<std::string, std::vector<uint8_t>>& inputs,
                                                       const ProgressFn& progress = {}, const Precision& prec = {});

// The multiply-adds of the full reference (its products; elementwise ops count nothing).
double reference_work(const Graph& g);

// Some elements of an output: their storage indexes, ascending, and the reference's values and
// scales there (ref.value[k] belongs to element index[k]), bit for bit those of run_reference.
struct SampledRef {
  std::vector<int64_t> index;
  RefTensor ref;
};

// Which elements of t a sampled check looks at, as ascending storage indexes: every element
// when samples >= numel; else `samples` distinct ones chosen from the seed, covering every row
// (all dimensions but the last, flattened) and every column (the last) at least once when
// samples >= max(rows, columns). The same arguments give the same elements.
std::vector<int64_t> choose_samples(const Tensor& t, int64_t samples, uint64_t seed);

// The reference at the elements choose_samples(output, samples, seed) picks, for every output.
// The op writing an output, and the elementwise ops leading to it, are evaluated per element;
// tensors that a product reads from another op are computed in full first.
Result<std::map<std::string, SampledRef>> run_reference_sampled(
    const Graph& g, const std::map<std::string, std::vector<uint8_t>>& inputs, int64_t samples, uint64_t seed,
    const ProgressFn& progress = {}, const Precision& prec = {});

}  // namespace gexec
