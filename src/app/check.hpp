// Checking a run's outputs against the CPU reference of the graph as loaded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gexec/app/commands.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

// --verify auto checks fully while the reference's products stay below this many multiply-adds
// (seconds of CPU time), and samples above it.
constexpr double kFullCheckWork = 8589934592.0;  // 2^33

// Tensor ids by name, built once: Graph::find_tensor is a linear search, and a graph may have
// tens of thousands of outputs.
std::unordered_map<std::string_view, TensorId> tensor_ids(const Graph& g);

// The stored bytes of every input of the graph as loaded: read back from the device where the
// executed graph still has it, else taken from `loaded` (--load-inputs) or generated on the host
// (the same bits as the device's) where passes removed it or the planner gave it no buffer.
// Inputs that no op of the graph as loaded reads are left out unless `with_unread` (--dump
// writes them; the reference needs none of them, and they may be huge).
Result<std::map<std::string, std::vector<uint8_t>>> reference_inputs(
    const Graph& original, const Executor& ex, uint64_t seed, const std::map<std::string, std::vector<uint8_t>>& loaded,
    bool with_unread = false);

// The outputs of the graph as loaded, read back from the executed graph by name.
Result<std::map<std::string, std::vector<uint8_t>>> read_outputs(const Graph& original, const Executor& ex);

// "full", "sample", "exact" or "none": --verify as given, or for auto chosen by the reference's work.
std::string check_mode(const Graph& g, const std::string& verify);

// What the check needs besides the graph and the tensors.
struct CheckSettings {
  std::string mode = "full";        // full, sample or exact (bit equality)
  int64_t samples = 4096;
  uint64_t seed = 0;                // chooses the sampled elements
  std::optional<double> atol, rtol; // override the defaults
  Precision precision;              // the arithmetic the kernels declare
};

// The settings `gexec run` (and the Python API's check()) compares with: `mode` as check_mode chose
// it, the samples and tolerances of `o`, TF32 products where `backend` is CUDA (cuBLASLt runs f32
// operands on TF32 tensor cores; the CPU backend multiplies in f32), and what the kernels that ran
// declare (`declared`, Executor::precision(): an unfused fallback's extra rounding, an approximate
// GELU, the FP8 tensor cores' accumulator), the union over the graph.
CheckSettings run_check_settings(const RunOptions& o, const std::string& mode, uint64_t seed, Backend backend,
                                 const Precision& declared);

// Compares every output with the reference (full, sampled or exact, per settings.mode).
Result<std::vector<OutputCheck>> check_outputs(const Graph& original,
                                               const std::map<std::string, std::vector<uint8_t>>& inputs,
                                               const std::map<std::string, std::vector<uint8_t>>& outputs,
                                               const CheckSettings& settings);

}  // namespace gexec
