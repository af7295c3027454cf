// Checking a run's outputs against the CPU reference of the graph as loaded.
#include "check.hpp"

#include "gexec/ir/block_scale.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <optional>
#include <tuple>
#include <string_view>
#include <unordered_map>

#include "gexec/ir/block_scale.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/reference.hpp"
#include "gexec/exec/trace.hpp"
#include "gexec/verify/reference_cost.hpp"
#include "progress.hpp"
#include "target.hpp"


namespace gexec {
namespace {


TensorId lookup(const std::unordered_map<std::string_view, TensorId>& names, const std::string& name) {
  const auto it = names.find(name);
  return it == names.end() ? kNone : it->second;
}

}  // namespace

std::unordered_map<std::string_view, TensorId> tensor_ids(const Graph& g) {
  std::unordered_map<std::string_view, TensorId> names;
  names.reserve(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) names.emplace(g.tensors[t].name, TensorId(t));
  return names;
}

Result<std::map<std::string, std::vector<uint8_t>>> reference_inputs(
    const Graph& original, const Executor& ex, uint64_t seed, const std::map<std::string, std::vector<uint8_t>>& loaded,
    bool with_unread) {
  std::map<std::string, std::vector<uint8_t>> inputs;
  const GraphIndex idx(original);
  const auto run_names = tensor_ids(ex.graph());
  for (size_t t = 0; t < original.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    if (!with_unread && idx.consumers[t].empty()) continue;  // the reference never reads it
    const Tensor& tensor = original.tensors[t];
    const TensorId there = lookup(run_names, tensor.name);
    // Not on the device (a pass removed its readers, or none ever read it): the host draws the
    // same values the device would have, bit for bit (rng/init.hpp).
    if (there == kNone || !ex.has_buffer(there)) {
      const auto l = loaded.find(tensor.name);
      inputs[tensor.name] = l != loaded.end() ? l->second : generate_input(drawable_input(original, TensorId(t), loaded, seed), seed);
      continue;
    }
    auto bytes = ex.read(there);
    if (!bytes) return bytes.error();
    inputs[tensor.name] = std::move(*bytes);
  }
  return inputs;
}

std::map<std::string, const void*> resident_inputs(const Graph& original, const Executor& ex) {
  std::map<std::string, const void*> at;
  const GraphIndex idx(original);
  const auto run_names = tensor_ids(ex.graph());
  for (size_t t = 0; t < original.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    const Tensor& tensor = original.tensors[t];
    const TensorId there = lookup(run_names, tensor.name);
    // (Of another size, the reference refuses the bytes read back before any engine reads these.)
    if (there != kNone && ex.has_buffer(there) && ex.graph().tensor(there).bytes() == tensor.bytes())
      at[tensor.name] = ex.address(there);
  }
  return at;
}

namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.2g" : "%.0f", s);
  return buf;
}

// The finest strata whose sampled reference fits the budget, else the coarsest.
std::pair<int64_t, double> choose_strata(const Graph& g, double budget_s, int64_t samples, const Precision& prec,
                                         const ReferenceRates& rates) {
  double estimate = 0;
  for (int64_t tile : kStrata) {
    estimate = estimate_sampled_seconds(g, prec, samples, tile, rates);
    if (estimate <= budget_s) return {tile, estimate};
  }
  return {kStrata[std::size(kStrata) - 1], estimate};
}

double op_elements(const Graph& g) {
  double n = 0;
  for (const Op& op : g.ops)
    for (TensorId t : op.outputs) n += double(g.tensor(t).numel());
  return n;
}

// The products each output depends on, by op name.
std::vector<std::string> upstream_products(const Graph& g, const GraphIndex& idx, TensorId out) {
  std::vector<std::string> names;
  std::vector<bool> seen(g.tensors.size(), false);
  std::vector<TensorId> stack{out};
  while (!stack.empty()) {
    const TensorId t = stack.back();
    stack.pop_back();
    if (seen[size_t(t)]) continue;
    seen[size_t(t)] = true;
    const OpId p = idx.producer[size_t(t)];
    if (p == kNone) continue;
    const Op& op = g.ops[size_t(p)];
    if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT) names.push_back(op.name);
    for (TensorId in : op.inputs) stack.push_back(in);
  }
  return names;
}

}  // namespace

CheckPlan plan_check(const Graph& g, VerifyMode verify, double budget_s, int64_t samples,
                     const Precision& prec, bool device) {
  CheckPlan p;
  p.mode = verify;
  if (verify == VerifyMode::none) return p;
  if (has_block_scales(g)) {
    // The sampled reference has no S per block of a quantizing CAST (it needs whole blocks), and
    // the device's widening reads tensor-wise and per-axis scales only.
    p.mode = verify == VerifyMode::exact ? verify : VerifyMode::full;
    p.why = "block scales: the full reference on the CPU";
    return p;
  }
  if (verify == VerifyMode::full || verify == VerifyMode::exact) {
    p.device = device;
    return p;
  }
  // The sampled reference computes no grouped products: the full one does (the products of other
  // ops still on the device where it can).
  for (const Op& op : g.ops)
    if (op.type == OpType::GROUPED_GEMM) {
      p.mode = VerifyMode::full;
      p.device = device;
      p.why = "GROUPED_GEMM: the full reference (the sampled one has no grouped products)";
      return p;
    }
  const bool small = reference_work(g) < kSmallReferenceWork && op_elements(g) < kSmallReferenceElements;
  if (verify == VerifyMode::sample) {
    if (small) {
      p.tile = kStrata[0];  // the finest: affordable whatever the rate
      return p;
    }
    const ReferenceRates& rates = measured_reference_rates();
    std::tie(p.tile, p.estimate_s) = choose_strata(g, budget_s, samples, prec, rates);
    return p;
  }
  // auto
  p.mode = VerifyMode::full;
  if (device) {
    p.device = true;
    p.why = "the products summed on the device in float64";
    return p;
  }
  if (small) {
    p.why = "a small reference";
    return p;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const ReferenceRates& rates = measured_reference_rates();
  spdlog::debug("reference rates ({:.0f} ms to measure): products {:.3g} multiply-adds/s, sampled {:.3g}/s, "
                "elements {:.3g}/s",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                rates.product_macs_per_s, rates.sampled_macs_per_s, rates.elements_per_s);
  const double full = estimate_full_seconds(g, prec, rates);
  const std::string budget = "the --verify-budget of " + seconds_text(budget_s) + " s";
  spdlog::debug("full CPU reference estimated at {:.3g} s (budget {:.3g} s)", full, budget_s);
  if (full <= budget_s) {
    p.estimate_s = full;
    p.why = "the full CPU reference is estimated at " + seconds_text(full) + " s, within " + budget;
    return p;
  }
  p.mode = VerifyMode::sample;
  std::tie(p.tile, p.estimate_s) = choose_strata(g, budget_s, samples, prec, rates);
  spdlog::debug("full reference estimated at {:.3g} s; sampled, one in every {}x{} tile, at {:.3g} s", full, p.tile,
                p.tile, p.estimate_s);
  p.why = "the full CPU reference would take about " + seconds_text(full) + " s, over " + budget;
  return p;
}

std::string first_refusal(const ProductEngine& engine, const Graph& g, const Precision& prec) {
  for (const ProductKind& kind : reference_products(g, prec))
    if (std::string why = engine.refusal(kind); !why.empty()) return why;
  return {};
}

std::unique_ptr<ProductEngine> device_for_check(CheckPlan& plan, const Graph& g, VerifyMode verify,
                                                double budget_s, int64_t samples, int ordinal, const Precision& prec,
                                                std::string* why) {
  if (!plan.device) return nullptr;
  auto opened = open_device_reference(ordinal);
  *why = opened ? first_refusal(**opened, g, prec) : opened.error().message;
  if (why->empty()) return std::move(*opened);
  plan = plan_check(g, verify, budget_s, samples, prec, false);
  return nullptr;
}

CheckSummary check_summary(VerifyMode requested, const CheckPlan& plan, const CheckSettings& settings,
                           double reference_work, double budget_s, const ProductEngine* device) {
  CheckSummary c;
  c.requested = requested;
  c.mode = plan.mode;
  c.precision = settings.precision.tf32 ? PrecisionChoice::tf32 : PrecisionChoice::f32;
  c.samples = settings.samples;
  c.tile = plan.mode == VerifyMode::sample ? plan.tile : 0;
  c.reference_work = reference_work;
  c.budget_s = budget_s;
  c.estimate_s = plan.estimate_s;
  c.why = plan.why;
  if (device) c.reference = ReferenceSite::device, c.device = device->name();
  return c;
}

Result<std::vector<OutputCheck>> check_outputs(const Graph& original,
                                               const std::map<std::string, std::vector<uint8_t>>& inputs,
                                               const std::map<std::string, std::vector<uint8_t>>& outputs,
                                               const CheckSettings& settings, std::vector<std::string>* notes) {
  Progress bar("reference");
  const ProgressFn progress = [&bar](double done) { bar.update(done); };
  // The tensor itself, not a search by name: the check stays linear in the number of outputs.
  auto tolerance = [&settings](const Tensor& t) {
    Tolerance tol = output_tolerance(t);
    if (settings.atol) tol.atol = *settings.atol;
    if (settings.rtol) tol.rtol = *settings.rtol;
    tol.exact = settings.mode == VerifyMode::exact;
    return tol;
  };
  auto got = [&outputs](const Tensor& t) -> Result<const uint8_t*> {
    const auto it = outputs.find(t.name);
    if (it == outputs.end() || static_cast<int64_t>(it->second.size()) != t.bytes())
      return bad_input("output " + t.name + ": no values of its size to check");
    return it->second.data();
  };
  // An f8 output with a block scale is read with the S that the run wrote (an output too) or was given.
  auto with_run_scale = [&](const Tensor& t) -> Result<Tensor> {
    std::optional<Tensor> read_as = with_scale_from(original, t, outputs);
    if (!read_as) read_as = with_scale_from(original, t, inputs);
    if (!read_as)
      return bad_input("output " + t.name + ": no values of its block scale " +
                       original.tensor(t.scale.tensor).name + " to read it with");
    return std::move(*read_as);
  };
  // Every output against its reference (all of it, or the sampled elements), in the graph's order.
  const auto compare_all = [&](const auto& refs, const auto& compare) -> Result<std::vector<OutputCheck>> {
    std::vector<OutputCheck> checks;
    for (TensorId id : original.outputs) {
      const Tensor* t = &original.tensor(id);
      Result<Tensor> read_as = Tensor{};
      if (t->scale.is_block()) {
        read_as = with_run_scale(*t);
        if (!read_as) return read_as.error();
        t = &*read_as;
      }
      auto g = got(*t);
      if (!g) return g.error();
      checks.push_back(compare(*t, *g, refs.at(t->name), tolerance(*t)));
    }
    return checks;
  };
  if (settings.mode == VerifyMode::sample) {
    auto ref = run_reference_sampled(original, inputs, settings.samples, settings.seed, progress,
                                      settings.precision, settings.tile);
    if (!ref) return ref.error().with("reference");
    auto checks = compare_all(*ref, compare_sampled);
    if (!checks) return checks;
    const auto ids = tensor_ids(original);
    for (OutputCheck& c : *checks) {
      c.tile = settings.tile;
      const Tensor& t = original.tensor(ids.at(c.name));
      const TileShape ts = tile_of(t, settings.tile);
      const int64_t tiles = sample_count(t, 0, settings.tile);
      c.checked_by = c.checked >= c.count
                         ? "the sampled CPU reference at every element"
                         : "the sampled CPU reference by strata: one element in every " + std::to_string(ts.rows) + "x" +
                               std::to_string(ts.cols) + " tile" + (c.checked > tiles ? ", the rest at random" : "");
    }
    return checks;
  }
  std::optional<CrossCheckedEngine> device;
  if (settings.device) device.emplace(*settings.device, kCrossCheckSamples, settings.seed);
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  const auto t0 = Clock::now();
  const auto device_text = [&] {
    return device ? fmt::format("device sums {:.1f} ms (the last product's: {}), their CPU cross-check {:.1f} ms",
                                device->device_ms(), device->device_phases(), device->cross_check_ms())
                  : std::string("on the CPU");
  };
  Result<std::vector<OutputCheck>> checks = std::vector<OutputCheck>{};
  if (device && streamable(original)) {
    // One product: its reference and the comparison go panel by panel, the host never holding
    // the whole of either (at 8192^2, eight arrays of 512 MiB faulted in and filled took most of
    // the check's time).
    const Tensor& t = original.tensor(original.outputs[0]);
    auto g = got(t);
    if (!g) return g.error();
    StreamedComparison streamed(t, *g, tolerance(t));
    bool in_order = true;
    const Status st = stream_reference(
        original, inputs, settings.precision, *device, kStreamPanelElements,
        [&](int64_t x0, const RefTensor& panel) { in_order = in_order && streamed.add(x0, panel); }, progress);
    if (!st) return st.error().with("reference");
    if (!in_order) return runtime_error("reference: its panels came out of order (a bug)");
    checks->push_back(streamed.finish());
    spdlog::debug("check: reference and comparison streamed by panels {:.1f} ms ({})", ms(t0, Clock::now()),
                  device_text());
  } else {
    auto ref = run_reference(original, inputs, progress, settings.precision, device ? &*device : nullptr);
    if (!ref) return ref.error().with("reference");
    const auto t1 = Clock::now();
    checks = compare_all(*ref, compare_output);
    if (!checks) return checks;
    spdlog::debug("check: reference {:.1f} ms ({}), comparison {:.1f} ms", ms(t0, t1), device_text(),
                  ms(t1, Clock::now()));
  }
  const GraphIndex idx(original);
  const auto ids = tensor_ids(original);
  for (OutputCheck& c : *checks) {
    int64_t recomputed = 0, products = 0;
    if (device)
      for (const std::string& op : upstream_products(original, idx, ids.at(c.name))) {
        const auto it = device->on_device().find(op);
        if (it != device->on_device().end()) recomputed += it->second, ++products;
      }
    if (products > 0) {
      c.reference = ReferenceSite::device;
      c.cross_checked = recomputed;
      c.checked_by = "the reference with its products summed in float64 on " + device->name() + ", cross-checked at " +
                     std::to_string(recomputed) + " of their elements against the CPU";
    } else {
      c.checked_by = "the full CPU reference";
    }
  }
  if (device && notes) notes->insert(notes->end(), device->notes().begin(), device->notes().end());
  return checks;
}

Result<std::map<std::string, std::vector<uint8_t>>> read_outputs(const Graph& original, const Executor& ex) {
  std::map<std::string, std::vector<uint8_t>> outputs;
  const auto run_names = tensor_ids(ex.graph());
  for (TensorId id : original.outputs) {
    const std::string& name = original.tensor(id).name;
    const TensorId there = lookup(run_names, name);
    if (there == kNone) return runtime_error("output " + name + " is missing after the passes");
    auto got = ex.read(there);
    if (!got) return got.error();
    outputs[name] = std::move(*got);
  }
  return outputs;
}

CheckSettings run_check_settings(const PrepareOptions& o, const CheckPlan& plan, uint64_t seed, Backend backend,
                                 const Precision& declared) {
  CheckSettings settings;
  settings.mode = plan.mode;
  settings.tile = plan.tile;
  settings.samples = o.samples;
  settings.seed = seed;
  settings.atol = o.atol;
  settings.rtol = o.rtol;
  settings.precision.tf32 = backend == Backend::cuda && o.kernel.tf32;
  settings.precision.merge(declared);
  return settings;
}

Status check_against_reference(const Graph& original, const PrepareOptions& opts, const CheckPlan& planned,
                               Backend backend, const Precision& declared, const Executor* resident,
                               const HostTensors& inputs, const HostTensors& outputs, std::optional<CheckSummary>& into,
                               const std::function<void(std::string)>& warn,
                               const std::function<void()>& before_compare) {
  const TraceRange range("gexec check");
  // A copy: where the device cannot take the products, this check's plan moves to the CPU.
  CheckPlan plan = planned;
  CheckSettings settings = run_check_settings(opts, plan, opts.seed, backend, declared);
  std::string why;
  const std::unique_ptr<ProductEngine> engine = device_for_check(
      plan, original, opts.verify, opts.verify_budget, opts.samples, opts.device, settings.precision, &why);
  if (!why.empty()) {
    // The CPU's reference instead, within the budget as on the CPU backend.
    warn("the check runs on the CPU: " + why);
    settings = run_check_settings(opts, plan, opts.seed, backend, declared);
  }
  settings.device = engine.get();
  if (engine && backend == Backend::cuda && resident) engine->set_resident(resident_inputs(original, *resident));
  into = check_summary(opts.verify, plan, settings, reference_work(original), opts.verify_budget, engine.get());
  if (plan.mode != VerifyMode::none) {
    if (before_compare) before_compare();  // a sampled check says so before the reference's work starts
    std::vector<std::string> notes;
    auto checks = check_outputs(original, inputs, outputs, settings, &notes);
    for (std::string& n : notes) warn(std::move(n));
    if (!checks) return checks.error();
    const auto ids = tensor_ids(original);  // find_tensor per output would be quadratic
    for (OutputCheck& c : *checks) {
      const auto id = ids.find(c.name);
      std::vector<int64_t> shape = id == ids.end() ? std::vector<int64_t>{} : original.tensor(id->second).shape;
      into->outputs.push_back({std::move(c), std::move(shape)});
    }
  }
  into->compared = true;
  return {};
}

}  // namespace gexec
