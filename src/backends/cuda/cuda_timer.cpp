// The CUDA timer. The method, in order:
//  1. Set-up, before anything is timed: one event per sample boundary (iters + 1) and two for
//     calibration are created; with opts.cuda_graph, one enqueue() is captured on the stream
//     (thread-local capture mode), instantiated and uploaded. A run that cannot be captured
//     (any error while capturing) is timed with direct launches instead, and says so.
//  2. Warm-up, untimed: opts.warmup_iters iterations, then more in chunks until opts.warmup_ms
//     of wall time has passed since the warm-up began. Chunks double while they are shorter
//     than 10 ms; the stream is synchronised only between chunks, so the host never runs more
//     than one chunk ahead.
//  3. Calibration, untimed (counted as warm-up): batches of back-to-back iterations between two
//     events, growing until one batch lasts at least kMinSampleMicros; its mean gives the batch
//     size `reps` of the samples (1 for iterations of kMinSampleMicros or more).
//  4. The timed loop: an event, then for each sample `reps` iterations back to back and an
//     event. Nothing else is called in it: no synchronisation, allocation or query. The events
//     are read after one synchronisation at the end; each sample is the time between its two
//     events divided by reps, so it is the mean of reps consecutive iterations on the device,
//     including any time the device waited for the host to launch them.
#include "cuda_timer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include <cuda_profiler_api.h>

#include <optional>

#include "gexec/exec/trace.hpp"
#include "raii.hpp"

namespace gexec::cuda {
namespace {

using Clock = std::chrono::steady_clock;
using GraphHandle = Handle<cudaGraph_t, &cudaGraphDestroy>;

constexpr double kWarmupChunkMs = 10;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Waits for the stream on the way out, whatever the exit: the graph and events it guards must
// not be destroyed while launches that use them are still pending. Declared after them, so
// destroyed before them.
struct DrainOnExit {
  cudaStream_t stream;
  ~DrainOnExit() { (void)cudaStreamSynchronize(stream); }
};

// Ends a capture that an error left open and clears the error it left behind.
void abandon_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t g = nullptr;
    (void)cudaStreamEndCapture(stream, &g);
    if (g) (void)cudaGraphDestroy(g);
  }
  (void)cudaGetLastError();
}

Result<double> elapsed_us(const Event& from, const Event& to) {
  float ms = 0;
  GEXEC_CUDA_TRY(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return double(ms) * 1000.0;
}

// cudaProfilerStop on every way out of the timed loop once started: an error in it must not leave
// the profiler's capture range open.
struct ProfilerRange {
  bool open;
  explicit ProfilerRange(bool started) : open(started) {}
  Status stop() {
    if (!open) return {};
    open = false;
    GEXEC_CUDA_TRY(cudaProfilerStop());
    return {};
  }
  ~ProfilerRange() {
    if (open) (void)cudaProfilerStop();
  }
};

}  // namespace

Result<GraphExec> capture_run(cudaStream_t stream, const std::function<Status()>& enqueue, std::string* why) {
  // Earlier work must be complete and clean, so that its errors are not blamed on the capture.
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    *why = std::string("cudaStreamBeginCapture: ") + cudaGetErrorName(e);
    abandon_capture(stream);
    return GraphExec();
  }
  const Status enqueued = enqueue();
  cudaGraph_t raw = nullptr;
  e = cudaStreamEndCapture(stream, &raw);  // always ended, even after a failed enqueue
  GraphHandle graph(raw);
  if (!enqueued || e != cudaSuccess || !raw) {
    *why = !enqueued ? enqueued.error().message
                     : std::string("cudaStreamEndCapture: ") + (e != cudaSuccess ? cudaGetErrorName(e) : "no graph");
    abandon_capture(stream);
    return GraphExec();
  }
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, graph.get(), 0);
  if (e != cudaSuccess) {
    *why = std::string("cudaGraphInstantiate: ") + cudaGetErrorName(e);
    (void)cudaGetLastError();
    return GraphExec();
  }
  GraphExec owned(exec);
  e = cudaGraphUpload(owned.get(), stream);
  const cudaError_t waited = cudaStreamSynchronize(stream);  // also before `owned` can go away
  if (e != cudaSuccess) return cuda_error(e, "cudaGraphUpload", __FILE__, __LINE__);
  if (waited != cudaSuccess) return cuda_error(waited, "cudaStreamSynchronize", __FILE__, __LINE__);
  return owned;
}

Result<std::vector<double>> time_on_stream(cudaStream_t stream, const std::function<Status()>& enqueue,
                                           const TimingOptions& opts, bool* graph_used) {
  if (graph_used) *graph_used = false;
  if (opts.iters < 1) return bad_input("timing needs at least one iteration, got " + std::to_string(opts.iters));

  // 1. Set-up.
  std::vector<Event> marks;
  marks.reserve(size_t(opts.iters) + 1);
  for (int i = 0; i <= opts.iters; ++i) {
    auto e = make_event();
    if (!e) return e.error().with("creating the timing events");
    marks.push_back(std::move(*e));
  }
  auto cal0 = make_event(), cal1 = make_event();
  if (!cal0) return cal0.error().with("creating the timing events");
  if (!cal1) return cal1.error().with("creating the timing events");

  GraphExec exec;
  if (opts.cuda_graph) {
    std::string why;
    auto captured = capture_run(stream, enqueue, &why);
    if (!captured) return captured.error().with("capturing the run as a CUDA graph");
    exec = std::move(*captured);
    if (!exec) spdlog::warn("the run cannot be captured as a CUDA graph ({}); timing direct launches", why);
  }
  const DrainOnExit drain{stream};
  if (graph_used) *graph_used = bool(exec);

  auto launch = [&]() -> Status {
    if (exec) {
      GEXEC_CUDA_TRY(cudaGraphLaunch(exec.get(), stream));
      return {};
    }
    return enqueue();
  };
  auto launch_n = [&](int64_t n) -> Status {
    for (int64_t i = 0; i < n; ++i) GEXEC_TRY(launch());
    return {};
  };

  // 2. Warm-up by count, then by duration.
  const auto warm_start = Clock::now();
  int64_t warm = std::max(0, opts.warmup_iters);
  for (int64_t i = 0; i < warm; ++i) {
    GEXEC_TRY(poll_timing(opts));
    GEXEC_TRY(launch());
  }
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  for (int64_t chunk = 1; opts.warmup_ms > 0 && ms_since(warm_start) < opts.warmup_ms;) {
    GEXEC_TRY(poll_timing(opts));
    const auto c0 = Clock::now();
    GEXEC_TRY(launch_n(chunk));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
    warm += chunk;
    if (ms_since(c0) < kWarmupChunkMs && chunk < (int64_t(1) << 20)) chunk *= 2;
  }

  // 3. Calibration: the batch size. Aims at twice the minimum so that the last batch is
  // measured well above the events' resolution.
  // None with profile_range: the iterations are a fixed count, one per sample.
  double per_iter_us = 0;
  for (int64_t n = 1; !opts.profile_range;) {
    GEXEC_TRY(poll_timing(opts));
    GEXEC_CUDA_TRY(cudaEventRecord(cal0->get(), stream));
    GEXEC_TRY(launch_n(n));
    GEXEC_CUDA_TRY(cudaEventRecord(cal1->get(), stream));
    GEXEC_CUDA_TRY(cudaEventSynchronize(cal1->get()));
    auto us = elapsed_us(*cal0, *cal1);
    if (!us) return us.error();
    warm += n;
    per_iter_us = *us / double(n);
    if (*us >= kMinSampleMicros || n >= kMaxReps) break;
    const double want = std::ceil(2 * kMinSampleMicros / std::max(per_iter_us, 0.01));
    n = std::min<int64_t>(kMaxReps, std::max<int64_t>(2 * n, int64_t(want)));
  }
  // plan.samples <= opts.iters: the events made in the set-up suffice.
  const SamplePlan plan = plan_samples(opts, reps_for_sample(per_iter_us));
  const int reps = plan.reps;
  const double warm_ms = ms_since(warm_start);

  // 4. The timed loop, in an NVTX range, and with profile_range alone between cudaProfilerStart
  // and cudaProfilerStop (stopped after the last iteration has finished on the device).
  std::optional<TraceRange> traced;
  traced.emplace("gexec timed iterations");
  ProfilerRange profiler(opts.profile_range);
  if (opts.profile_range) GEXEC_CUDA_TRY(cudaProfilerStart());
  GEXEC_CUDA_TRY(cudaEventRecord(marks[0].get(), stream));
  for (int i = 0; i < plan.samples; ++i) {
    // Host-side only (the launches are asynchronous): the device's time is not interrupted.
    GEXEC_TRY(poll_timing(opts));
    for (int r = 0; r < reps; ++r) GEXEC_TRY(launch());
    GEXEC_CUDA_TRY(cudaEventRecord(marks[size_t(i) + 1].get(), stream));
    if (opts.progress) opts.progress(double(i + 1) / double(plan.samples));
  }
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  GEXEC_TRY(profiler.stop());
  traced.reset();

  std::vector<double> samples;
  samples.reserve(size_t(plan.samples));
  for (int i = 0; i < plan.samples; ++i) {
    auto us = elapsed_us(marks[size_t(i)], marks[size_t(i) + 1]);
    if (!us) return us.error();
    samples.push_back(*us / double(reps));
  }
  if (opts.info) *opts.info = TimingInfo{reps, warm, warm_ms};
  return samples;
}

}  // namespace gexec::cuda
