// Checking a run's outputs against the CPU reference of the graph as loaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gexec/app/commands.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/product_engine.hpp"

namespace gexec {

// Elements of each product whose device sums are summed again on the CPU (CrossCheckedEngine).
constexpr int64_t kCrossCheckSamples = 2048;
// Elements of C per panel where a one-product graph's check is streamed (stream_reference): 4M,
// 32 MiB per array of doubles, a few arrays on the host at a time.
constexpr int64_t kStreamPanelElements = int64_t(1) << 22;
// A graph whose products stay below this many multiply-adds, and whose ops below this many
// elements, is checked in full on the CPU without measuring the reference's rate: at 5e7
// multiply-adds per second, a slow machine's (a sanitizer build), it takes about a second.
constexpr double kSmallReferenceWork = 67108864.0;  // 2^26
constexpr double kSmallReferenceElements = 16777216.0;  // 2^24

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

// The device addresses of the inputs reference_inputs reads back from the device, by name: a
// device engine on the run's device reads them there (ProductEngine::set_resident).
std::map<std::string, const void*> resident_inputs(const Graph& original, const Executor& ex);

// The outputs of the graph as loaded, read back from the executed graph by name.
Result<std::map<std::string, std::vector<uint8_t>>> read_outputs(const Graph& original, const Executor& ex);

// How the outputs of a graph are checked.
struct CheckPlan {
  VerifyMode mode = VerifyMode::full;  // full, sample (by strata), exact (full, bit equality) or none; never auto
  int64_t tile = 0;           // sample: one element in every tile x tile block of each output (tile_of)
  bool device = false;        // full and exact: the products' sums on the device, cross-checked on the CPU
  double estimate_s = -1;     // the CPU reference's estimated seconds (of the mode chosen); -1: not estimated
  std::string why;            // why auto chose as it did, for the report; empty for a mode asked for
};

// The strata a sampled check tries, finest first: the finest whose estimate fits the budget, else
// the coarsest, which still finds any wrong block of 64 x 64.
constexpr int64_t kStrata[] = {8, 16, 32};

// How --verify `verify` (auto, full, sample, exact or none) checks g, with `device` where the
// products can be summed on a device: auto is full there; on the CPU it is full where the full
// reference's estimated time (measured_reference_rates) is within `budget_s`, else sampled by
// strata. sample takes the finest strata within the budget, with at least `samples` elements.
CheckPlan plan_check(const Graph& g, VerifyMode verify, double budget_s, int64_t samples,
                     const Precision& prec, bool device);

// What the check needs besides the graph and the tensors.
struct CheckSettings {
  VerifyMode mode = VerifyMode::full;  // full, sample, exact (bit equality)
  int64_t samples = 4096;           // sample: at least this many elements per output
  int64_t tile = 0;                 // sample: and one in every tile x tile block (0: none)
  uint64_t seed = 0;                // chooses the sampled elements
  std::optional<double> atol, rtol; // override the defaults
  Precision precision;              // the arithmetic the kernels declare
  // full and exact: the device engine the products' sums come from, each product cross-checked
  // on the CPU at kCrossCheckSamples elements; null: the CPU's.
  ProductEngine* device = nullptr;
};

// The settings `gexec run` (and the Python API's check()) compares with: the plan's mode and strata,
// the samples and tolerances of `o`, TF32 products where `backend` is CUDA (cuBLASLt runs f32
// operands on TF32 tensor cores; the CPU backend multiplies in f32), and what the kernels that ran
// declare (`declared`, Executor::precision(): an unfused fallback's extra rounding, an approximate
// GELU, the FP8 tensor cores' accumulator), the union over the graph.
CheckSettings run_check_settings(const PrepareOptions& o, const CheckPlan& plan, uint64_t seed, Backend backend,
                                 const Precision& declared);

// Why `engine` could not take one of the products of g's reference now (its device memory, with
// the figures), or empty when it could take them all.
std::string first_refusal(const ProductEngine& engine, const Graph& g, const Precision& prec);

// For a plan on the device (plan.device): the device's float64 engine where it can take every
// product of g's reference now. Else null, the plan moved to the CPU (full within the budget,
// else by strata), and *why says why.
std::unique_ptr<ProductEngine> device_for_check(CheckPlan& plan, const Graph& g, VerifyMode verify,
                                                double budget_s, int64_t samples, int ordinal, const Precision& prec,
                                                std::string* why);

// The report's check section before the outputs are compared: what was asked, what the plan is.
CheckSummary check_summary(VerifyMode requested, const CheckPlan& plan, const CheckSettings& settings,
                           double reference_work, double budget_s, const ProductEngine* device);

// Compares every output with the reference (full, sampled or exact, per settings.mode); each
// OutputCheck says what checked it. `notes` (where given) receives what the user should know,
// such as a product summed on the CPU because the device's memory was short.
Result<std::vector<OutputCheck>> check_outputs(const Graph& original,
                                               const std::map<std::string, std::vector<uint8_t>>& inputs,
                                               const std::map<std::string, std::vector<uint8_t>>& outputs,
                                               const CheckSettings& settings, std::vector<std::string>* notes = nullptr);

// The outputs against the reference of `original` as `gexec run` checks them (PreparedRun::check):
// planned as `plan` says, on the device's float64 engine where the plan and the device's memory
// allow (reading the inputs that `resident`, where given, holds on the device), else on the CPU;
// the bound follows `declared`. `into`, `warn` and `before_compare` as in PreparedRun::check.
Status check_against_reference(const Graph& original, const PrepareOptions& opts, const CheckPlan& plan,
                               Backend backend, const Precision& declared, const Executor* resident,
                               const HostTensors& inputs, const HostTensors& outputs, std::optional<CheckSummary>& into,
                               const std::function<void(std::string)>& warn,
                               const std::function<void()>& before_compare);

}  // namespace gexec
