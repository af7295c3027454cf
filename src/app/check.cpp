// Checking a run's outputs against the CPU reference of the graph as loaded.
#include "check.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "gexec/rng/init.hpp"
#include "gexec/verify/reference.hpp"
#include "progress.hpp"

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
      inputs[tensor.name] = l != loaded.end() ? l->second : generate_input(tensor, seed);
      continue;
    }
    auto bytes = ex.read(there);
    if (!bytes) return bytes.error();
    inputs[tensor.name] = std::move(*bytes);
  }
  return inputs;
}

std::string check_mode(const Graph& g, const std::string& verify) {
  if (verify != "auto") return verify;
  return reference_work(g) < kFullCheckWork ? "full" : "sample";
}

Result<std::vector<OutputCheck>> check_outputs(const Graph& original,
                                               const std::map<std::string, std::vector<uint8_t>>& inputs,
                                               const std::map<std::string, std::vector<uint8_t>>& outputs,
                                               const CheckSettings& settings) {
  Progress bar("reference");
  const ProgressFn progress = [&bar](double done) { bar.update(done); };
  // The tensor itself, not a search by name: the check stays linear in the number of outputs.
  auto tolerance = [&settings](const Tensor& t) {
    Tolerance tol = output_tolerance(t);
    if (settings.atol) tol.atol = *settings.atol;
    if (settings.rtol) tol.rtol = *settings.rtol;
    tol.exact = settings.mode == "exact";
    return tol;
  };
  auto got = [&outputs](const Tensor& t) -> Result<const uint8_t*> {
    const auto it = outputs.find(t.name);
    if (it == outputs.end() || static_cast<int64_t>(it->second.size()) != t.bytes())
      return bad_input("output " + t.name + ": no values of its size to check");
    return it->second.data();
  };
  // Every output against its reference (all of it, or the sampled elements), in the graph's order.
  const auto compare_all = [&](const auto& refs, const auto& compare) -> Result<std::vector<OutputCheck>> {
    std::vector<OutputCheck> checks;
    for (TensorId id : original.outputs) {
      const Tensor& t = original.tensor(id);
      auto g = got(t);
      if (!g) return g.error();
      checks.push_back(compare(t, *g, refs.at(t.name), tolerance(t)));
    }
    return checks;
  };
  if (settings.mode == "sample") {
    auto ref = run_reference_sampled(original, inputs, settings.samples, settings.seed, progress,
                                      settings.precision);
    if (!ref) return ref.error().with("reference");
    return compare_all(*ref, compare_sampled);
  }
  auto ref = run_reference(original, inputs, progress, settings.precision);
  if (!ref) return ref.error().with("reference");
  return compare_all(*ref, compare_output);
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

CheckSettings run_check_settings(const RunOptions& o, const std::string& mode, uint64_t seed, Backend backend,
                                 const Precision& declared) {
  CheckSettings settings;
  settings.mode = mode;
  settings.samples = o.samples;
  settings.seed = seed;
  settings.atol = o.atol;
  settings.rtol = o.rtol;
  settings.precision.tf32 = backend == Backend::cuda && o.precision != "f32";
  settings.precision.merge(declared);
  return settings;
}

}  // namespace gexec
