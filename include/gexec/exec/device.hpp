// The interface every backend implements: memory, input initialisation, kernels, timing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gexec/exec/communicator.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/exec/tunable.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/kernels/kernel_def.hpp"
#include "gexec/status.hpp"
#include "gexec/kernels/precision.hpp"

namespace gexec {

// One op bound to its buffers. Built once before the runs.
class Kernel {
 public:
  virtual ~Kernel() = default;
  // Once, before the first run: plans, algorithm choice, workspaces, conversions of constants.
  virtual Status prepare() = 0;
  // Enqueues one execution on the device's stream. Never allocates or synchronises.
  virtual Status run() = 0;
  // Once the device has finished a run (synchronised): what the run found wrong in its data, as a
  // runtime error (GROUPED_GEMM's offsets are data: a kernel notes bad ones on the device, where
  // run() cannot wait for them). Default: nothing to report.
  virtual Status after_run() { return {}; }
  // A collective that runs on a communication stream beside the ops after it: makes the device's
  // stream wait for its results, before the first op that reads them. Default: its results are
  // in order on the device's stream already.
  virtual Status wait_for_results() { return {}; }

  // The variant that runs, described for the report (cuBLASLt: algorithm id, tile, stages,
  // split-K, swizzle, as cublasLtMatmulAlgoConfigGetAttribute reads them); empty: nothing to say.
  virtual std::string algo_description() const { return {}; }
  // What the user should know about how the op runs, once prepared (e.g. why an epilogue was not
  // fused); empty when there is nothing to say.
  virtual std::string note() const { return {}; }
  // The autotuner's handle on the kernel's variants; null when it has none to offer.
  virtual Tunable* tunable() { return nullptr; }
  // The arithmetic this kernel declares, once prepared (what it fused or fell back to decides
  // it): the check's bound follows it (verify/bound.hpp). Default: f32 accumulation, nothing else.
  virtual Precision precision() const { return {}; }
  // For buffers a caller owns (Executor::bind): points the runs at the given buffers for every
  // operand that is not fixed before the runs, exactly, with nothing kept from the old ones.
  // False, changing nothing, where the kernel cannot (an operand fixed before the runs moved, an
  // address less aligned than what the kernel was built for); the executor then builds the kernel
  // again on the new buffers.
  virtual bool move_operands(const Binding& b) {
    (void)b;
    return false;
  }
};

// One run captured once and launched as a whole (a CUDA graph), for a caller that runs the same
// bindings again and again: valid only while the kernels keep their buffers.
class Replay {
 public:
  virtual ~Replay() = default;
  // Enqueues the captured run on the device's stream; no synchronisation.
  virtual Status launch() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual Backend backend() const = 0;
  virtual const DeviceCaps& caps() const = 0;

  // The one arena for every tensor; runtime error naming the bytes needed and free when it
  // does not fit. Released with the Device.
  virtual Result<void*> allocate_arena(int64_t bytes) = 0;
  // A buffer outside the arena, freed when the last reference goes: results handed to a caller
  // who keeps them after the next run (the Python binding's outputs). Aligned as the arena.
  virtual Result<std::shared_ptr<void>> allocate_buffer(int64_t bytes) {
    (void)bytes;
    return runtime_error("this backend cannot allocate buffers outside the arena");
  }

  // Writes a graph input's values at dst: drawn on the device from (seed, name) when the init
  // is random or constant, bit-identical to generate_input(); uploaded otherwise.
  virtual Status fill_input(const Tensor& t, void* dst, uint64_t seed) = 0;
  virtual Status upload(void* dst, const void* src, size_t bytes) = 0;
  virtual Status download(void* dst, const void* src, size_t bytes) = 0;
  // Fills with 0xFF bytes (NaN in every dtype) so that unwritten output shows up in the check.
  virtual Status poison(void* dst, size_t bytes) = 0;

  // Builds the kernel that implements `def` (by def.impl) for one op on its buffers; `options`
  // are those the op's kernel was selected with.
  virtual Result<std::unique_ptr<Kernel>> make_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                      const Binding& binding, const KernelOptions& options) = 0;
  // Waits for all enqueued work; reports any asynchronous failure.
  virtual Status synchronize() = 0;

  // For callers whose own work runs on the legacy default stream (CuPy's and PyTorch's default):
  // the stream runs are enqueued on as an integer (cudaStream_t; 0 where there is none), what a
  // DLPack producer is asked to order its work before.
  virtual uintptr_t stream_handle() const { return 0; }
  // Orders the device's stream after the work enqueued so far on the legacy default stream, and
  // (default_stream_waits) that stream after the device's work so far: a caller's work and the
  // runs interleave in program order without a host synchronisation. Nothing on the CPU.
  virtual Status wait_for_default_stream() { return {}; }
  virtual Status default_stream_waits() { return {}; }

  // Captures what `enqueue` enqueues (one run, not executed by the capture) for replays; a null
  // Replay, with the reason in *why, where it cannot be captured (and always off CUDA).
  virtual Result<std::unique_ptr<Replay>> capture(const std::function<Status()>& enqueue, std::string* why) {
    (void)enqueue;
    *why = "this backend has no captured runs";
    return std::unique_ptr<Replay>();
  }

  // Times `enqueue` (one run of the graph): warm-up, then opts.iters timed iterations; returns
  // one time per iteration in microseconds. *graph_used says whether a captured graph was
  // replayed (opts.cuda_graph and the run could be captured).
  virtual Result<std::vector<double>> time_runs(const std::function<Status()>& enqueue, const TimingOptions& opts,
                                                bool* graph_used) {
    (void)enqueue, (void)opts, (void)graph_used;
    return runtime_error("timing is not supported on this backend");
  }

  // The device's dense f16 matrix rate in TFLOP/s, measured once and cached; an error when unknown.
  virtual Result<double> peak_tflops() { return runtime_error("the peak of this backend is unknown"); }

  // A sharded run (--tp): the communicator this device is rank `rank` of, which its collective
  // kernels reach the other ranks through. Joined before the kernels are built; null outside one.
  void join(std::shared_ptr<Communicator> comm, int rank) {
    comm_ = std::move(comm);
    rank_ = rank;
  }
  Communicator* communicator() const { return comm_.get(); }
  int rank() const { return rank_; }
  // Where one thread drives several devices (a sharded run on CUDA): makes this one the thread's
  // current device, before its kernels are built or enqueued. Nothing on the CPU.
  virtual Status make_current() { return {}; }

 private:
  std::shared_ptr<Communicator> comm_;
  int rank_ = 0;
};

}  // namespace gexec
