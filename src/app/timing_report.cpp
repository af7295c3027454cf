// The timing report: statistics, rates, the noise warning, the per-op profile, the JSON line.
#include "timing_report.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gexec/app/commands.hpp"
#include "gexec/exec/rotation.hpp"
#include "gexec/exec/work.hpp"

namespace gexec {
namespace {

// Per-op timings use a shorter warm-up: the whole run's warm-up has already warmed the device.
constexpr double kProfileWarmupMs = 50;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "1.23 G" style, for FLOP and byte counts per run.
std::string si(double v) {
  const char* unit[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return fmt("%.4g", v) + " " + unit[u];
}

Result<std::vector<OpTime>> profile_ops(Executor& ex, const TimingOptions& opts) {
  TimingOptions one = opts;
  one.cuda_graph = false;  // each op on its own, launched directly
  one.profile = false;
  one.profile_range = false;  // the profiler's range holds the whole run's timed iterations only
  one.progress = nullptr;
  one.info = nullptr;
  one.warmup_ms = std::min(opts.warmup_ms, kProfileWarmupMs);
  std::vector<OpTime> times;
  for (size_t k = 0; k < ex.kernel_count(); ++k) {
    const Op& op = ex.op_of_kernel(k);
    bool graph_used = false;
    auto samples = ex.device().time_runs([&ex, k] { return ex.enqueue_op(k); }, one, &graph_used);
    if (!samples) return samples.error().with("timing op " + op.name);
    times.push_back({op.name, std::string(op_type_name(op.type)), summarize(std::move(*samples)).median});
  }
  return times;
}

const char* how(const RunTiming& t) { return t.graph_used ? "CUDA graph replay" : "direct launches"; }

// The operand sets to rotate over (opts.rotate_bytes), bound back to the first when done. A graph
// of several kernels, or a kernel that cannot be rebound, is timed warm, with a note saying so.
struct Rotation {
  Tunable* kernel = nullptr;  // the one kernel's rebinding hook
  std::vector<Binding> sets;
  std::string note;
  bool cold = false;
  ~Rotation() {
    if (kernel && sets.size() > 1) kernel->rebind(sets.front());
  }
};

Status prepare_rotation(Executor& ex, int64_t bytes, Rotation& rot) {
  if (bytes <= 0) return {};
  if (ex.kernel_count() != 1) {
    rot.note = "cold-L2 timing rotates the operands of one kernel; this run has " +
               std::to_string(ex.kernel_count()) + ": timed warm";
    return {};
  }
  const std::string warm = "kernel of op " + ex.op_of_kernel(0).name + " cannot be rebound to other buffers: timed warm";
  Tunable* k = ex.kernel(0).tunable();
  if (!k && rotation_shape(ex, 0, bytes).extra > 0) {  // known before drawing the sets (128 MB of them)
    rot.note = warm;
    return {};
  }
  auto sets = rotating_sets(ex, 0, bytes);
  if (!sets) return sets.error();
  if (sets->size() > 1 && (!k || !k->rebind(sets->front()))) {
    rot.note = warm;
    return {};
  }
  rot.kernel = k;
  rot.sets = std::move(*sets);
  // Cold only where what the runs read in turn exceeds the L2 (one set larger than it leaves the
  // cache between runs by itself); fewer bytes may stay in it, and the timing says so.
  const double touched = double(rotation_shape(ex, 0, bytes).set_bytes) * double(rot.sets.size());
  rot.cold = touched > double(kL2Bytes);
  if (!rot.cold)
    rot.note = std::to_string(rot.sets.size()) + " operand set" + (rot.sets.size() == 1 ? "" : "s") + " of " +
               fmt("%.3g", touched / 1048576) + " MiB in all fit in an L2 of " +
               fmt("%.0f", double(kL2Bytes) / 1048576) + " MiB: timed warm (a larger --rotating, or a larger product, exceeds it)";
  return {};
}

}  // namespace

Status measure_timing(Executor& ex, const TimingOptions& opts, std::optional<double> peak_tflops, RunTiming& into) {
  TimingOptions run = opts;
  run.info = &into.info;
  into.options = opts;
  into.options.info = nullptr;
  Rotation rot;
  if (Status s = prepare_rotation(ex, opts.rotate_bytes, rot); !s) return s.error().with("cold-L2 timing");
  if (!rot.note.empty()) into.rotation_note = rot.note;
  into.rotating_sets = std::max<int>(1, int(rot.sets.size()));
  into.cold_l2 = rot.cold;
  const auto enqueue = [&]() -> Status {
    if (rot.sets.size() <= 1) return ex.enqueue();
    for (const Binding& b : rot.sets) {
      rot.kernel->rebind(b);
      GEXEC_TRY(ex.enqueue());
    }
    return {};
  };
  // --duration: rounds of opts.iters samples, the later ones without warm-up, until enough time.
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  std::vector<double> all;
  for (int round = 0;; ++round) {
    if (round > 0) run.warmup_iters = 0, run.warmup_ms = 0, run.info = nullptr;
    auto samples = ex.device().time_runs(enqueue, run, round == 0 ? &into.graph_used : nullptr);
    if (!samples) return samples.error().with("timing");
    if (samples->empty()) return runtime_error("timing: the device returned no samples");
    for (double v : *samples) all.push_back(v / double(into.rotating_sets));
    if (std::chrono::duration<double>(Clock::now() - start).count() >= opts.duration_s) break;
  }
  into.samples = all;
  into.stats = summarize(std::move(all));
  const Work work = count_work(ex.graph());
  const double seconds = into.stats.median * 1e-6;
  into.flops = work.flops;
  into.bytes = work.bytes;
  into.tflops = seconds > 0 ? work.flops / seconds / 1e12 : 0;
  into.gbps = seconds > 0 ? work.bytes / seconds / 1e9 : 0;
  into.peak_tflops = peak_tflops;
  if (peak_tflops && *peak_tflops > 0) into.peak_pct = 100.0 * into.tflops / *peak_tflops;
  into.noisy = into.stats.cv > kNoisyCv;
  if (opts.profile) {
    auto ops = profile_ops(ex, opts);
    if (!ops) return ops.error().with("profiling");
    into.profile = std::move(*ops);
  }
  into.complete = true;
  return {};
}

std::string noisy_message(const RunTiming& t) {
  return "the timings are noisy: cv " + fmt("%.1f%%", t.stats.cv * 100) + " is above " +
         fmt("%.0f%%", kNoisyCv * 100) +
         "; the device may be shared, throttling or changing clocks; compare medians with care";
}

void print_timing(std::ostream& out, const RunTiming& t) {
  const TimingStats& s = t.stats;
  const TimingOptions& opts = t.options;
  out << "timing: " << s.samples << " samples of " << t.info.reps << " back-to-back iteration"
      << (t.info.reps == 1 ? "" : "s") << ", " << how(t) << "; warm-up " << opts.warmup_iters << " iterations"
      << (opts.warmup_ms > 0 ? fmt(" and %.0f ms", opts.warmup_ms) : "") << " (" << t.info.warmup_iters
      << " run in " << fmt("%.1f", t.info.warmup_ms) << " ms, calibration included)\n";
  if (t.cold_l2 && t.rotating_sets > 1)
    out << "  cold L2: each iteration rotates over " << t.rotating_sets << " operand sets; times are per set\n";
  else if (t.cold_l2)
    out << "  cold L2: one operand set is larger than the L2, so each run reads it from memory\n";
  else if (t.rotating_sets > 1)
    out << "  each iteration rotates over " << t.rotating_sets << " operand sets; times are per set\n";
  if (!t.rotation_note.empty()) out << "  note: " << t.rotation_note << "\n";
  out << "  per iteration (us): min " << fmt("%.3f", s.min) << ", median " << fmt("%.3f", s.median) << ", mean "
      << fmt("%.3f", s.mean) << ", p90 " << fmt("%.3f", s.p90) << ", p99 " << fmt("%.3f", s.p99) << ", max "
      << fmt("%.3f", s.max) << "; cv " << fmt("%.1f%%", s.cv * 100) << " (percentiles interpolated)\n";
  out << "  at the median: " << fmt("%.4g", t.tflops) << " TFLOP/s (" << si(t.flops) << "FLOP a run), "
      << fmt("%.4g", t.gbps) << " GB/s (" << si(t.bytes) << "B a run: inputs read once, outputs written once)\n";
  if (t.peak_pct)
    out << "  " << fmt("%.3g%%", *t.peak_pct) << " of the peak " << fmt("%.1f", *t.peak_tflops) << " TFLOP/s\n";
  else
    out << "  % of peak: peak unknown\n";
  if (t.noisy) out << "  warning: " << noisy_message(t) << "\n";
  if (!t.complete) return;

  if (opts.profile) {
    double sum = 0;
    for (const OpTime& o : t.profile) sum += o.median_us;
    out << "profile: each op timed alone with direct launches, " << opts.iters << " samples each\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %-14s %12s %7s\n", "op", "type", "median us", "share");
    out << line;
    for (const OpTime& o : t.profile) {
      std::snprintf(line, sizeof line, "  %-24s %-14s %12.3f %6.1f%%\n", o.name.c_str(), o.type.c_str(), o.median_us,
                    sum > 0 ? 100.0 * o.median_us / sum : 0.0);
      out << line;
    }
    out << "  sum of the ops " << fmt("%.3f", sum) << " us; the whole run " << fmt("%.3f", s.median) << " us ("
        << how(t) << ")\n";
  }
  out << "timing-json: " << timing_json(t).dump() << "\n";
}

nlohmann::json timing_json(const RunTiming& t) {
  const TimingStats& s = t.stats;
  nlohmann::json j = {{"samples", s.samples},  {"reps", t.info.reps},   {"graph_used", t.graph_used},
                      {"median_us", s.median}, {"min_us", s.min},       {"mean_us", s.mean},
                      {"p90_us", s.p90},       {"p99_us", s.p99},       {"max_us", s.max},
                      {"cv", s.cv},            {"flops", t.flops},      {"bytes", t.bytes},
                      {"tflops", t.tflops},    {"gbps", t.gbps},        {"warmup_iters", t.info.warmup_iters},
                      {"rotating_sets", t.rotating_sets}, {"l2", t.cold_l2 ? "cold" : "warm"}};
  j["peak_tflops"] = t.peak_tflops ? nlohmann::json(*t.peak_tflops) : nlohmann::json(nullptr);
  j["peak_pct"] = t.peak_pct ? nlohmann::json(*t.peak_pct) : nlohmann::json(nullptr);
  if (t.options.profile) {
    nlohmann::json ops = nlohmann::json::array();
    for (const OpTime& o : t.profile) ops.push_back({{"name", o.name}, {"type", o.type}, {"median_us", o.median_us}});
    j["ops"] = ops;
  }
  return j;
}

Status time_and_report(Executor& ex, const TimingOptions& opts, std::optional<double> peak_tflops,
                       std::ostream& out, nlohmann::json* json_out) {
  RunTiming t;
  const Status s = measure_timing(ex, opts, peak_tflops, t);
  if (!s.ok() && t.stats.samples == 0) return s;
  if (t.noisy) spdlog::warn("{}", noisy_message(t));
  print_timing(out, t);
  if (!s.ok()) return s;
  if (json_out) *json_out = timing_json(t);
  return {};
}

int64_t rotation_bytes(bool cold_l2, double rotating_mb) {
  // At least a byte: --rotating 1e-9 asks for rotation (of one set), not for none.
  if (rotating_mb > 0) return std::max<int64_t>(1, int64_t(rotating_mb * 1e6));
  return cold_l2 ? kDefaultRotateBytes : 0;
}

}  // namespace gexec
