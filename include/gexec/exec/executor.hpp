// Runs a selected, planned graph on a Device: set up once (arena, inputs, kernels), then runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/exec/device.hpp"
#include "gexec/exec/trace.hpp"
#include "gexec/kernels/select.hpp"

namespace gexec {

class Executor {
 public:
  // Allocates the arena, fills the graph inputs from the seed, builds every kernel, runs the
  // hoisted ops and prepares the others. Nothing of this is repeated per run.
  // Inputs named in `host_inputs` are uploaded from those stored bytes instead of drawn.
  static Result<std::unique_ptr<Executor>> create(Device& device, Graph graph, const Selection& selection,
                                                  const BufferPlan& plan, uint64_t seed,
                                                  const std::map<std::string, std::vector<uint8_t>>* host_inputs = nullptr);

  // Enqueues one run: every op that is not hoisted, in order. No allocation, no synchronisation.
  Status enqueue();
  // Enqueues the k-th op that runs every time (for per-op timing, and a sharded run's steps);
  // k < kernel_count(). Where it reads a collective's results, the stream waits for them first.
  Status enqueue_op(size_t k);
  // The device's stream waits for every collective enqueued (their results may be on a
  // communication stream): the end of a run, before its outputs are read or its time taken.
  Status join_collectives();
  // The op of the k-th kernel that runs every time.
  const Op& op_of_kernel(size_t k) const { return graph_.ops[run_ops_[k]]; }
  // Poisons the outputs, enqueues one run and waits for it: a run whose outputs are checked.
  Status run_checked();
  // Poisons the outputs that every run writes (not those of hoisted ops, written once): the first
  // step of run_checked, for a caller that enqueues the run itself (a sharded run's steps).
  Status poison_outputs();
  // Once the device has finished the runs enqueued so far: each kernel's after_run (what a run
  // found wrong in its data, e.g. GROUPED_GEMM's offsets), the first failure returned.
  Status after_runs();

  // The k-th kernel that runs every time (for autotuning); k < kernel_count().
  Kernel& kernel(size_t k) const { return *kernels_[k]; }
  // The buffers the k-th kernel was built on (Kernel::rebind returns it to them).
  Binding binding_of_kernel(size_t k) const { return binding_of(op_of_kernel(k)); }
  // Points tensor t at `address`, a buffer the caller owns and keeps alive while bound, instead of
  // its arena slot, for the runs that follow; nullptr returns it to its slot (which keeps the
  // values it was initialised with). Only graph inputs and outputs that no hoisted op reads or
  // writes can be bound (why_not_bindable()). The kernels on t move their operands
  // (Kernel::move_operands) or are built again on the new buffers; binding the same address again
  // does nothing. A constant is read when its kernels are built (so again after it moves), and
  // its values are taken as fixed between. The command line never binds: its tensors stay in
  // the arena.
  Status bind(TensorId t, void* address);
  // Empty when t can be bound, else why not ("it is constant", ...).
  std::string why_not_bindable(TensorId t) const;
  // The address t is read or written at: its bound buffer or its arena slot.
  void* address(TensorId t) const;
  // Changes whenever a kernel's buffers change (bind() moving one): a captured run
  // (Device::capture) of an older version points at old buffers.
  uint64_t bindings_version() const { return bindings_version_; }

  // Fills a tensor with NaN bytes (Device::poison), so that a run that does not write it shows.
  Status poison(TensorId t) { return device_.poison(address(t), size_t(graph_.tensor(t).bytes())); }

  // Whether the tensor has bytes in the arena: the planner leaves out tensors no op reads or
  // writes (an unused graph input), and those have nothing to read.
  bool has_buffer(TensorId t) const { return t >= 0 && size_t(t) < offset_.size() && offset_[size_t(t)] >= 0; }
  // The stored bytes of a tensor, copied to the host; an error for one without a buffer.
  Result<std::vector<uint8_t>> read(TensorId t) const;

  // "op NAME: NOTE" for every kernel with a note (Kernel::note()), in op order.
  std::vector<std::string> notes() const;

  // The union of what every kernel declares about its arithmetic (Kernel::precision()): the
  // graph's check follows it.
  Precision precision() const;

  const Graph& graph() const { return graph_; }
  Device& device() const { return device_; }
  size_t kernel_count() const { return kernels_.size(); }

 private:
  Executor(Device& device, Graph graph) : device_(device), graph_(std::move(graph)) {}
  Binding binding_of(const Op& op) const;  // its operands' addresses (bound buffers or arena)
  Status move_kernel(size_t k);            // kernel k onto its operands' current addresses

  Device& device_;
  Graph graph_;
  std::vector<int64_t> offset_;
  std::vector<TensorId> poisoned_;
  char* base_ = nullptr;
  std::vector<std::unique_ptr<Kernel>> kernels_;  // the ops that run every time, in order
  std::vector<size_t> run_ops_;                   // their op indexes
  std::vector<std::string> trace_names_;          // their trace ranges: "OP [KERNEL]"
  std::vector<std::vector<size_t>> waits_;        // per kernel: the collectives (k) whose results it reads
  std::vector<size_t> collectives_;               // the kernels (k) of collectives
  std::vector<std::unique_ptr<Kernel>> once_;     // hoisted ops, kept alive with their buffers
  std::vector<const KernelDef*> defs_;            // per op: its kernel, to build it again
  KernelOptions options_;                         // what the kernels were selected and built with
  std::vector<void*> bound_;                      // per tensor: the caller's buffer, or null
  std::vector<std::vector<size_t>> users_;        // per tensor: the kernels (k) reading or writing it
  std::vector<std::string> unbindable_;           // per tensor: why it cannot be bound, or empty
  uint64_t bindings_version_ = 0;
};

}  // namespace gexec
