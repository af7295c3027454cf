// The autotuner. For each kernel with several variants it
//  1. runs the ops up to it with the default variant, and computes the reference of its op (a
//     sample of kVerifySamples output elements, from the op's inputs as they are on the device);
//  2. runs them with each variant (the output poisoned first) and rejects any whose output
//     fails the check against that reference (the bound of verify/bound.hpp, for the
//     Precision the kernels declare): a wrong-result algorithm (cuBLASLt 13.1's split-K bug on
//     Hopper) is never chosen, even where the default is wrong the same way;
//  3. times each variant through Device::time_runs, running only that kernel, launched as the
//     run will be timed (graph replay or direct launches), and keeps the fastest that passed.
// Small problems would sit in the L2 cache between back-to-back runs on the same buffers and look
// faster than they are in a graph whose other ops evict them. So one timed iteration runs the
// kernel once on each of several sets of its operands (Tunable::rebind), drawn like the graph's
// inputs and together twice the L2 cache (exec/rotation.hpp's sets, at most kMaxRotatingSets; the
// kernel's own alone where memory is short), and the time is divided by the number of sets. The
// kernel is bound back to its own buffers afterwards.
#include "gexec/tune/autotune.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gexec/exec/rotation.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/tune/tuning_cache.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"

namespace gexec {
namespace {

// Output elements each candidate is checked at: every row and column of outputs up to 4096 on a
// side, at a reference cost of 4096 * K multiply-adds.
constexpr int64_t kVerifySamples = 4096;

class Tuner {
 public:
  Tuner(Executor& ex, const AutotuneOptions& opts) : ex_(ex), opts_(opts) {}

  // The output of kernel k's op with variant v, after the ops before it ran.
  // The reference of kernel k's op at a sample of its output, from its inputs as they are on
  // the device (output_of has run the ops before it).
  Result<SampledRef> op_reference(size_t k) {
    const Op& op = ex_.op_of_kernel(k);
    const Graph& g = ex_.graph();
    Graph one;
    one.name = "autotune." + op.name;
    Op copy = op;
    std::map<TensorId, TensorId> ids;
    std::map<std::string, std::vector<uint8_t>> inputs;
    auto local = [&](TensorId t) {
      auto [it, fresh] = ids.emplace(t, TensorId(one.tensors.size()));
      if (fresh) one.tensors.push_back(g.tensor(t));
      return it->second;
    };
    for (TensorId& t : copy.inputs) {
      auto bytes = ex_.read(t);
      if (!bytes) return bytes.error();
      inputs[g.tensor(t).name] = std::move(*bytes);
      t = local(t);
    }
    for (TensorId& t : copy.outputs) t = local(t);
    one.ops = {copy};
    one.outputs = {copy.outputs[0]};
    auto r = run_reference_sampled(one, inputs, kVerifySamples, 0, {}, opts_.precision);
    if (!r) return r.error().with("autotune reference");
    return std::move(r->at(g.tensor(op.outputs[0]).name));
  }

  Result<std::vector<uint8_t>> output_of(size_t k, int v) {
    GEXEC_TRY(ex_.kernel(k).tunable()->select_variant(v));
    const TensorId out = ex_.op_of_kernel(k).outputs[0];
    GEXEC_TRY(ex_.poison(out));
    for (size_t j = 0; j <= k; ++j) GEXEC_TRY(ex_.enqueue_op(j));
    GEXEC_TRY(ex_.device().synchronize());
    return ex_.read(out);
  }

  // Median microseconds of one iteration of `enqueue`.
  Result<double> time(const std::function<Status()>& enqueue) {
    TimingOptions t;
    t.iters = opts_.iters;
    t.warmup_iters = 3;
    t.cuda_graph = opts_.cuda_graph;
    t.poll = opts_.poll;
    auto samples = ex_.device().time_runs(enqueue, t, nullptr);
    if (!samples) return samples.error();
    return summarize(std::move(*samples)).median;
  }

  // The operand sets kernel k rotates over: the first is its own buffers, the others are carved
  // from one pool (allocated once, at its largest) and drawn from the inputs' distributions.
  Result<std::vector<Binding>> rotation(size_t k) {
    const RotationShape shape = rotation_shape(ex_, k, kDefaultRotateBytes);
    if (shape.extra == 0) return std::vector<Binding>{ex_.binding_of_kernel(k)};  // one set fills the cache twice over
    if (pool_bytes_ < shape.pool_bytes()) {
      auto p = ex_.device().allocate_arena(shape.pool_bytes());
      if (!p) {
        // Tuning still works on the kernel's own buffers, only less like a full graph's run.
        spdlog::warn("autotune: no memory for rotating operand sets ({}); timing op {} on its own buffers",
                     p.error().message, ex_.op_of_kernel(k).name);
        return std::vector<Binding>{ex_.binding_of_kernel(k)};
      }
      pool_ = static_cast<char*>(*p);
      pool_bytes_ = shape.pool_bytes();
    }
    return carve_rotating_sets(ex_, k, shape, pool_);
  }

  Result<TunedKernel> tune(size_t k, size_t kernels) {
    Tunable& kernel = *ex_.kernel(k).tunable();
    const Op& op = ex_.op_of_kernel(k);
    const Tensor& out_t = ex_.graph().tensor(op.outputs[0]);
    TunedKernel r;
    r.op = op.name;
    r.signature = kernel.signature();
    r.variants = std::min(kernel.variant_count(), std::max(1, opts_.top));
    auto sets = rotation(k);
    if (!sets) return sets.error();
    // A kernel that cannot be rebound is timed on its own buffers.
    if (sets->size() > 1 && !kernel.rebind(sets->front())) sets->resize(1);
    const std::vector<Binding>& rot = *sets;
    auto first = output_of(k, 0);
    if (!first) return first.error();
    auto ref = op_reference(k);
    if (!ref) return ref.error();
    double best = -1;
    bool default_failed = false;
    for (int v = 0; v < r.variants; ++v) {
      if (opts_.progress) opts_.progress((double(k) + double(v) / r.variants) / double(kernels));
      auto got = v == 0 ? std::move(first) : output_of(k, v);
      if (!got) return got.error();
      const OutputCheck c = compare_sampled(out_t, got->data(), *ref, default_tolerance(out_t.dtype));
      if (!c.pass) {
        spdlog::debug("autotune: op {}: candidate {} ({}) fails the check against the reference (ratios {:.3g} per "
                      "element, {:.3g} normwise); rejected", op.name, v, kernel.variant_name(v), c.max_ratio,
                      c.norm_ratio);
        ++r.rejected;
        // The default stays the fallback where nothing passes (the run's own check then reports
        // it); no other failing candidate is timed.
        if (v > 0) continue;
        default_failed = true;
      }
      GEXEC_TRY(kernel.select_variant(v));
      auto us = time([&]() -> Status {
        for (const Binding& b : rot) {
          if (rot.size() > 1) kernel.rebind(b);
          GEXEC_TRY(ex_.enqueue_op(k));
        }
        return {};
      });
      if (rot.size() > 1) kernel.rebind(rot.front());
      if (!us) return us.error().with("timing candidate " + std::to_string(v) + " of op " + op.name);
      const double t = *us / double(rot.size());
      spdlog::debug("autotune: op {}: candidate {} ({}): {:.2f} us", op.name, v, kernel.variant_name(v), t);
      if (v == 0) r.default_us = t;
      if (!(v == 0 && default_failed) && (best < 0 || t < best)) best = t, r.chosen = v;
    }
    if (best < 0) best = r.default_us, r.chosen = 0;
    r.best_us = best;
    GEXEC_TRY(kernel.select_variant(r.chosen));
    r.chosen_name = kernel.variant_name(r.chosen);
    return r;
  }

 private:
  Executor& ex_;
  const AutotuneOptions& opts_;
  char* pool_ = nullptr;  // the rotating sets' memory (an arena of the device: freed with it)
  int64_t pool_bytes_ = 0;
};

}  // namespace

Result<std::vector<TunedKernel>> autotune(Executor& ex, const DeviceCaps& caps, const AutotuneOptions& opts,
                                          std::ostream& out) {
  TuningCache cache = load_tuning_cache(opts.cache_path, caps);
  // Only this run's new choices are saved, merged into what the file holds then: another
  // process may have saved its own since the load.
  TuningCache fresh{cache.device, cache.cuda, cache.cublaslt, {}};
  std::vector<TunedKernel> results;
  Tuner tuner(ex, opts);
  bool changed = false;
  for (size_t k = 0; k < ex.kernel_count(); ++k) {
    if (!ex.kernel(k).tunable() || ex.kernel(k).tunable()->variant_count() <= 1) continue;
    Tunable& kernel = *ex.kernel(k).tunable();
    const std::string sig = kernel.signature();
    const auto hit = sig.empty() ? cache.entries.end() : cache.entries.find(sig);
    if (hit != cache.entries.end()) {
      // The same configuration, wherever the heuristic lists it now; the default otherwise.
      int found = -1;
      for (int v = 0; v < kernel.variant_count() && found < 0; ++v)
        if (kernel.variant_name(v) == hit->second.name) found = v;
      if (found >= 0) {
        GEXEC_TRY(kernel.select_variant(found));
        TunedKernel r;
        r.op = ex.op_of_kernel(k).name;
        r.signature = sig;
        r.variants = kernel.variant_count();
        r.chosen = found;
        r.chosen_name = hit->second.name;
        r.default_us = hit->second.default_us;
        r.best_us = hit->second.best_us;
        r.from_cache = true;
        out << "autotune: op " << r.op << ": candidate " << found << " (" << r.chosen_name << ") from the cache\n";
        results.push_back(r);
        continue;
      }
      spdlog::warn("tuning cache: op {}: no candidate has the cached configuration ({}); using the default",
                   ex.op_of_kernel(k).name, hit->second.name);
    }
    if (!opts.tune) continue;
    auto r = tuner.tune(k, ex.kernel_count());
    if (!r) return r.error().with("autotuning op " + ex.op_of_kernel(k).name);
    char line[256];
    std::snprintf(line, sizeof line, "default %.2f us, best %.2f us (candidate %d of %d), gain %.2fx", r->default_us,
                  r->best_us, r->chosen, r->variants, r->default_us / std::max(r->best_us, 0.01));
    out << "autotune: op " << r->op << ": " << line << (r->rejected ? ", " + std::to_string(r->rejected) +
                                                                        " rejected by the check" : "")
        << "; " << r->chosen_name << "\n";
    if (!sig.empty()) {
      fresh.entries[sig] = TuningEntry{r->chosen, r->chosen_name, r->default_us, r->best_us};
      changed = true;
    }
    results.push_back(*r);
  }
  if (changed && !opts.cache_path.empty()) {
    GEXEC_TRY(save_tuning_cache(opts.cache_path, fresh));
    out << "autotune: saved " << fresh.entries.size() << " choice" << (fresh.entries.size() == 1 ? "" : "s")
        << " to " << opts.cache_path << "\n";
  }
  return results;
}

}  // namespace gexec
