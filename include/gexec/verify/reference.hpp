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
#include "gexec/verify/product_engine.hpp"

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
  // Whether its errors may repeat from row to row (down each column: a bias's error, a product of
  // repeated op(A) rows) or from column to column (along each row), in its logical [rows, last
  // dimension] order: a product reading it along such a line bounds it as coherent (in_step.hpp).
  bool repeats_down = false, repeats_across = false;
};

// Called now and then with the fraction of the work done, in [0, 1]; may be empty.
using ProgressFn = std::function<void(double done)>;

// `inputs` holds the stored bytes of every graph input, by name. Each op's result is rounded
// to its output dtype, as a device stores it. The products' sums come from `engine` (null: the
// CPU's); everything else is computed here. Returns the graph's outputs.
Result<std::map<std::string, RefTensor>> run_reference(const Graph& g,
                                                       const std::map<std::string, std::vector<uint8_t>>& inputs,
                                                       const ProgressFn& progress = {}, const Precision& prec = {},
                                                       ProductEngine* engine = nullptr);

// Whether g is one product (MATMUL or GEMM_BIAS_ACT) whose C, rank 2 and row-major, is the only
// output, its operands graph inputs: its reference can be streamed.
bool streamable(const Graph& g);

// The rows of C per panel of stream_reference: about `panel_elements` elements, whole chunks of
// the comparison (ref::kChunk, so that a streamed comparison has the bits of a whole one), at
// most `rows`.
int64_t stream_rows(int64_t rows, int64_t n, int64_t panel_elements);

// run_reference of a streamable graph by panels of C's rows: fn(x0, panel) for consecutive
// panels in order, panel holding elements [x0, x0 + size) of the output (value, scale, var; its
// arrays lent for the call), bit for bit those of run_reference; the products' sums streamed
// from `engine`. The host holds a few panels, never the whole reference.
Status stream_reference(const Graph& g, const std::map<std::string, std::vector<uint8_t>>& inputs,
                        const Precision& prec, ProductEngine& engine, int64_t panel_elements,
                        const std::function<void(int64_t x0, const RefTensor& panel)>& fn,
                        const ProgressFn& progress = {});

// The multiply-adds of the full reference (its products; elementwise ops count nothing).
double reference_work(const Graph& g);

// Some elements of an output: their storage indexes, ascending, and the reference's values and
// scales there (ref.value[k] belongs to element index[k]), bit for bit those of run_reference.
struct SampledRef {
  std::vector<int64_t> index;
  RefTensor ref;
};

// Which elements of t a sampled check looks at, as ascending storage indexes. The tensor is seen
// as a matrix: rows (all dimensions but the last, flattened) by columns (the last).
//  - tile > 0 (strata): one element, chosen from the seed, in every block of tile_rows x
//    tile_cols (tile_of), so that a wrong block of at least twice that size in each direction
//    always contains a sampled element; then, up to `samples` in all, others at random;
//  - tile 0: every element when samples >= numel; else `samples` distinct ones chosen from the
//    seed, covering every row and every column at least once when samples >= max(rows, columns).
// The same arguments give the same elements.
std::vector<int64_t> choose_samples(const Tensor& t, int64_t samples, uint64_t seed, int64_t tile = 0);

// The blocks of the strata for `tile`: tile x tile, or where t has fewer rows than `tile`, its
// rows by as many columns as keep tile^2 elements per block.
struct TileShape {
  int64_t rows = 1, cols = 1;
};
TileShape tile_of(const Tensor& t, int64_t tile);
// How many elements choose_samples(t, samples, seed, tile) returns, without choosing them.
int64_t sample_count(const Tensor& t, int64_t samples, int64_t tile);

// The reference at the elements choose_samples(output, samples, seed, tile) picks, for every
// output. The op writing an output, and the elementwise ops leading to it, are evaluated per
// element; tensors that a product reads from another op are computed in full first. A graph with
// block scales is refused (bad_input): its quantizing CASTs need whole blocks.
Result<std::map<std::string, SampledRef>> run_reference_sampled(
    const Graph& g, const std::map<std::string, std::vector<uint8_t>>& inputs, int64_t samples, uint64_t seed,
    const ProgressFn& progress = {}, const Precision& prec = {}, int64_t tile = 0);

}  // namespace gexec
