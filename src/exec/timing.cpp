// Statistics of timed samples, and the batching rule the timers share.
#include "gexec/exec/timing.hpp"

#include <algorithm>
#include <cmath>

namespace gexec {
namespace {

// The q-quantile (0 <= q <= 1) of sorted values, interpolated linearly between the two
// closest ranks (NumPy's default "linear" method): rank q * (n - 1). The median of an even
// count is thus the mean of the two middle values, and p99 of 50 samples lies between the
// two largest, rather than being the maximum as nearest-rank would make it.
double quantile(const std::vector<double>& sorted, double q) {
  const double rank = q * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - double(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

TimingStats summarize(std::vector<double> micros) {
  TimingStats s;
  if (micros.empty()) return s;
  std::sort(micros.begin(), micros.end());
  const size_t n = micros.size();
  s.samples = int64_t(n);
  s.min = micros.front();
  s.max = micros.back();
  s.median = quantile(micros, 0.50);
  s.p90 = quantile(micros, 0.90);
  s.p99 = quantile(micros, 0.99);
  double sum = 0;
  for (double v : micros) sum += v;
  s.mean = sum / double(n);
  // Sample standard deviation (n - 1): the samples estimate the spread of all runs.
  if (n > 1 && s.mean > 0) {
    double ss = 0;
    for (double v : micros) ss += (v - s.mean) * (v - s.mean);
    s.cv = std::sqrt(ss / double(n - 1)) / s.mean;
  }
  return s;
}

SamplePlan plan_samples(const TimingOptions& opts, int reps) {
  const int iters = std::max(opts.iters, 1);
  if (opts.profile_range) return {1, iters};
  if (!opts.count_iterations) return {std::max(reps, 1), iters};
  const int r = std::clamp(std::min(reps, iters / kMinSamples), 1, std::max(reps, 1));
  return {r, (iters + r - 1) / r};
}

double percentile(std::vector<double> micros, double pct) {
  if (micros.empty()) return 0;
  std::sort(micros.begin(), micros.end());
  return quantile(micros, std::clamp(pct, 0.0, 100.0) / 100.0);
}

int reps_for_sample(double micros_per_iter) {
  if (!(micros_per_iter > 0)) return kMaxReps;  // too short to measure (or NaN): the most we batch
  if (micros_per_iter >= kMinSampleMicros) return 1;
  const double reps = std::ceil(kMinSampleMicros / micros_per_iter);
  return int(std::min(reps, double(kMaxReps)));
}

}  // namespace gexec
