// Timing options and statistics of repeated runs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

// What a timing run did besides its samples, for the report (filled in where asked for).
struct TimingInfo {
  int reps = 1;                // back-to-back iterations per sample; each sample is their mean
  int64_t warmup_iters = 0;    // untimed iterations run first, calibration included
  double warmup_ms = 0;        // their wall time
};

struct TimingOptions {
  int iters = 0;            // timed iterations; 0: no timing
  int warmup_iters = 10;    // untimed iterations first
  double warmup_ms = 0;     // and/or untimed iterations until this much time has passed
  bool cuda_graph = true;   // capture one run as a CUDA graph and replay it, where it can be captured
  bool profile = false;     // also time each op on its own
  // iters counts iterations (gexec run and gemm): samples of up to the calibrated batch, at least
  // kMinSamples of them where iters allows; false: iters counts samples (the autotuner's way).
  bool count_iterations = false;
  double duration_s = 0;    // keep taking samples (in rounds of `iters`) until this many seconds of them
  int64_t rotate_bytes = 0; // > 0: rotate over operand sets of this many bytes in all (cold L2)
  // --profile-range: exactly `iters` timed iterations, one per sample, with no calibration, and on
  // the CUDA backend only those between cudaProfilerStart and cudaProfilerStop (an outside
  // profiler's capture range); the other backends have nothing to start.
  bool profile_range = false;
  TimingInfo* info = nullptr;  // where given, Device::time_runs writes what it did here
  // Where given, called between samples and warm-up steps: an error stops the timing and is
  // returned (the Python module's time() checks for Ctrl-C here).
  std::function<Status()> poll;
  // Where given, told the share of the timed samples enqueued (0 to 1) as the timed loop goes:
  // a progress line for long timings. Host-side, between samples.
  std::function<void(double)> progress;
};

// opts.poll's verdict, or success where there is none.
inline Status poll_timing(const TimingOptions& opts) { return opts.poll ? opts.poll() : Status{}; }

// Statistics of per-iteration times, in microseconds.
struct TimingStats {
  int64_t samples = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, p99 = 0, max = 0;
  double cv = 0;  // standard deviation over mean
};

TimingStats summarize(std::vector<double> micros);

// The pct-th percentile (0 to 100) of the values, interpolated as summarize() does; 0 when empty.
double percentile(std::vector<double> micros, double pct);

// A timed sample lasts at least this long: a single launch of a tiny graph is shorter than
// the events' resolution and jitter, so such graphs are timed in batches.
constexpr double kMinSampleMicros = 100;
// How many back-to-back iterations make one sample, from an estimate of one iteration's time:
// 1 at or above kMinSampleMicros, else enough to reach it (at most kMaxReps).
constexpr int kMaxReps = 10000;
int reps_for_sample(double micros_per_iter);

// How a timer spends opts.iters once calibrated to `reps` iterations a sample: with
// profile_range, iters samples of one iteration (the timers then skip the calibration); with
// count_iterations, batches of at most reps and at most iters / kMinSamples iterations (at least
// one), as many samples as make up iters; otherwise iters samples of reps.
constexpr int kMinSamples = 10;
struct SamplePlan {
  int reps = 1, samples = 0;
};
SamplePlan plan_samples(const TimingOptions& opts, int reps);

// Above this coefficient of variation the report warns that the timings are noisy.
constexpr double kNoisyCv = 0.10;

}  // namespace gexec
