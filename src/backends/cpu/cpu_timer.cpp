// The CPU timer: the CUDA timer's method (cuda_timer.cpp) on a synchronous backend, where the
// steady clock around a batch of runs measures the runs themselves.
#include "cpu_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace gexec::cpu {
namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

Status run_n(const std::function<Status()>& enqueue, int64_t n) {
  for (int64_t i = 0; i < n; ++i) GEXEC_TRY(enqueue());
  return {};
}

}  // namespace

Result<std::vector<double>> time_on_host(const std::function<Status()>& enqueue, const TimingOptions& opts) {
  if (opts.iters < 1) return bad_input("timing needs at least one iteration, got " + std::to_string(opts.iters));

  // Warm-up by count, then until opts.warmup_ms has passed.
  const auto warm_start = Clock::now();
  int64_t warm = std::max(0, opts.warmup_iters);
  for (int64_t i = 0; i < warm; ++i) {
    GEXEC_TRY(poll_timing(opts));
    GEXEC_TRY(enqueue());
  }
  while (opts.warmup_ms > 0 && us_between(warm_start, Clock::now()) < opts.warmup_ms * 1000.0) {
    GEXEC_TRY(poll_timing(opts));
    GEXEC_TRY(enqueue());
    ++warm;
  }

  // Calibration (counted as warm-up): batches grow until one lasts kMinSampleMicros.
  // None with profile_range: the iterations are a fixed count, one per sample.
  double per_iter_us = 0;
  for (int64_t n = 1; !opts.profile_range;) {
    GEXEC_TRY(poll_timing(opts));
    const auto t0 = Clock::now();
    GEXEC_TRY(run_n(enqueue, n));
    const double us = us_between(t0, Clock::now());
    warm += n;
    per_iter_us = us / double(n);
    if (us >= kMinSampleMicros || n >= kMaxReps) break;
    const double want = std::ceil(2 * kMinSampleMicros / std::max(per_iter_us, 0.01));
    n = std::min<int64_t>(kMaxReps, std::max<int64_t>(2 * n, int64_t(want)));
  }
  const SamplePlan plan = plan_samples(opts, reps_for_sample(per_iter_us));
  const int reps = plan.reps;
  const double warm_ms = us_between(warm_start, Clock::now()) / 1000.0;

  std::vector<double> samples;
  samples.reserve(size_t(plan.samples));
  for (int i = 0; i < plan.samples; ++i) {
    GEXEC_TRY(poll_timing(opts));  // outside the sample's time
    const auto t0 = Clock::now();
    GEXEC_TRY(run_n(enqueue, reps));
    samples.push_back(us_between(t0, Clock::now()) / double(reps));
    if (opts.progress) opts.progress(double(i + 1) / double(plan.samples));
  }
  if (opts.info) *opts.info = TimingInfo{reps, warm, warm_ms};
  return samples;
}

}  // namespace gexec::cpu
