// The executor: a short fixed set-up sequence, then runs that only launch kernels.
#include "gexec/exec/executor.hpp"

#include <map>

#include <algorithm>

#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/zeros.hpp"

namespace gexec {

void* Executor::address(TensorId t) const {
  void* bound = bound_[size_t(t)];
  return bound ? bound : base_ + offset_[size_t(t)];
}

Result<std::unique_ptr<Executor>> Executor::create(Device& device, Graph graph, const Selection& selection,
                                                   const BufferPlan& plan, uint64_t seed,
                                                   const std::map<std::string, std::vector<uint8_t>>* host_inputs) {
  std::unique_ptr<Executor> ex(new Executor(device, std::move(graph)));
  const Graph& g = ex->graph_;
  ex->offset_ = plan.offset;
  ex->bound_.assign(g.tensors.size(), nullptr);

  auto arena = device.allocate_arena(plan.arena_bytes);
  if (!arena) return arena.error();
  ex->base_ = static_cast<char*>(*arena);

  const GraphIndex idx(g);
  // Outputs written in every run are poisoned before it; inputs and hoisted results are not.
  for (TensorId t : g.outputs) {
    const OpId p = idx.producer[size_t(t)];
    if (p != kNone && !g.ops[size_t(p)].hoisted) ex->poisoned_.push_back(t);
  }
  // Block-scaled f8 inputs last: drawn in real units, they are stored with their S, in place by then.
  for (const bool blocks : {false, true})
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      if (!idx.is_input(TensorId(t)) || plan.offset[t] < 0 || g.tensors[t].scale.is_block() != blocks) continue;
      const Tensor& tensor = g.tensors[t];
      const std::vector<uint8_t>* host = nullptr;
      if (host_inputs)
        if (auto it = host_inputs->find(tensor.name); it != host_inputs->end()) host = &it->second;
      Status s;
      if (host) {
        if (static_cast<int64_t>(host->size()) != tensor.bytes())
          return bad_input("input " + tensor.name + ": " + std::to_string(host->size()) + " bytes given, " +
                           std::to_string(tensor.bytes()) + " expected");
        s = device.upload(ex->address(TensorId(t)), host->data(), host->size());
      } else if (blocks) {
        const TensorId st = tensor.scale.tensor;
        std::vector<uint8_t> scale(size_t(g.tensor(st).bytes()));
        s = device.synchronize();
        if (s) s = device.download(scale.data(), ex->address(st), scale.size());
        if (s)
          s = device.fill_input(with_block_values(tensor, reinterpret_cast<const float*>(scale.data())),
                                ex->address(TensorId(t)), seed);
      } else {
        s = device.fill_input(tensor, ex->address(TensorId(t)), seed);
      }
      if (!s) return s.error().with("initialising input " + g.tensors[t].name);
    }

  ex->users_.resize(g.tensors.size());
  ex->unbindable_.assign(g.tensors.size(), "");
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const bool output = std::find(g.outputs.begin(), g.outputs.end(), TensorId(t)) != g.outputs.end();
    std::string& why = ex->unbindable_[t];
    if (!idx.is_input(TensorId(t)) && !output) why = "it is an intermediate of the graph, not an input or output";
    else if (plan.offset[t] < 0) why = "no op reads or writes it";
  }
  ex->options_ = selection.options;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    ex->defs_.push_back(selection.ops[i].kernel);
    const std::vector<TensorId> reads = op_reads(g, op);  // inputs, and S of block scales
    for (const auto* ids : {&reads, &op.outputs})
      for (TensorId t : *ids) {
        if (op.hoisted && ex->unbindable_[size_t(t)].empty())
          ex->unbindable_[size_t(t)] = "op " + op.name + " reads or writes it once, before the runs";
        if (!op.hoisted) ex->users_[size_t(t)].push_back(ex->kernels_.size());
      }
    auto k = device.make_kernel(*selection.ops[i].kernel, g, op, ex->binding_of(op), selection.options);
    if (!k) return k.error().with("op " + op.name);
    // Hoisted ops run now, in order, so that kernels preparing later see their results
    // (for instance a constant bias converted once from the cast of a constant).
    if (op.hoisted) {
      Status s = (*k)->prepare();
      if (s) s = (*k)->run();
      if (!s) return s.error().with("op " + op.name + " (once, before the runs)");
      ex->once_.push_back(std::move(*k));
    } else {
      ex->kernels_.push_back(std::move(*k));
      ex->run_ops_.push_back(i);
      ex->trace_names_.push_back(op.name + " [" + selection.ops[i].kernel->name + "]");
    }
  }
  // Which collectives' results each kernel reads: it waits for them (Kernel::wait_for_results).
  {
    std::map<TensorId, size_t> from_collective;
    ex->waits_.resize(ex->kernels_.size());
    for (size_t k = 0; k < ex->kernels_.size(); ++k) {
      const Op& op = g.ops[ex->run_ops_[k]];
      for (TensorId t : op.inputs)
        if (auto it = from_collective.find(t); it != from_collective.end()) ex->waits_[k].push_back(it->second);
      if (is_collective(op.type)) {
        ex->collectives_.push_back(k);
        for (TensorId t : op.outputs) from_collective[t] = k;
      }
    }
  }
  if (Status s = device.synchronize(); !s) return s.error().with("running the hoisted ops");
  size_t k = 0;
  for (const Op& op : g.ops) {
    if (op.hoisted) continue;
    Status s = ex->kernels_[k++]->prepare();
    if (!s) return s.error().with("preparing op " + op.name);
  }
  if (Status s = device.synchronize(); !s) return s.error().with("preparing the kernels");
  return ex;
}

std::string Executor::why_not_bindable(TensorId t) const {
  if (t < 0 || size_t(t) >= graph_.tensors.size()) return "no such tensor";
  return unbindable_[size_t(t)];
}

Status Executor::move_kernel(size_t k) {
  const Op& op = op_of_kernel(k);
  const Binding b = binding_of(op);
  if (kernels_[k]->move_operands(b)) return {};
  // Built again, as in create(): the kernel could not move (e.g. a buffer less aligned than
  // the old one, which its algorithm choice assumed).
  auto fresh = device_.make_kernel(*defs_[run_ops_[k]], graph_, op, b, options_);
  if (!fresh) return fresh.error().with("op " + op.name);
  if (Status s = (*fresh)->prepare(); !s) return s.error().with("preparing op " + op.name);
  kernels_[k] = std::move(*fresh);
  return {};
}

Status Executor::bind(TensorId t, void* address) {
  if (const std::string why = why_not_bindable(t); !why.empty())
    return bad_input("tensor " + (t >= 0 && size_t(t) < graph_.tensors.size() ? graph_.tensor(t).name : "?") +
                     " cannot be bound to a caller's buffer: " + why);
  void* old = bound_[size_t(t)];
  if (old == address) return {};
  bound_[size_t(t)] = address;
  ++bindings_version_;
  for (size_t k : users_[size_t(t)]) {
    if (Status s = move_kernel(k); !s) {
      // Back to the old buffer, so that the executor stays usable; the kernels that moved move back.
      bound_[size_t(t)] = old;
      for (size_t j : users_[size_t(t)]) (void)move_kernel(j);
      return s.error().with("binding " + graph_.tensor(t).name);
    }
  }
  return {};
}

Binding Executor::binding_of(const Op& op) const {
  Binding b;
  for (TensorId t : op.inputs) b.inputs.push_back(address(t));
  for (TensorId t : op.outputs) b.outputs.push_back(address(t));
  for (TensorId t : scale_reads(graph_, op)) b.scales.push_back(address(t));
  return b;
}

Status Executor::enqueue() {
  size_t k = 0;
  for (const Op& op : graph_.ops) {
    if (op.hoisted) continue;
    Status s = enqueue_op(k++);
    if (!s) return s.error().with("running op " + op.name);
  }
  return join_collectives();
}

Status Executor::enqueue_op(size_t k) {
  for (size_t kc : waits_[k]) GEXEC_TRY(kernels_[kc]->wait_for_results());
  const TraceRange range(trace_names_[k]);
  return kernels_[k]->run();
}

Status Executor::join_collectives() {
  for (size_t kc : collectives_) GEXEC_TRY(kernels_[kc]->wait_for_results());
  return {};
}

Status Executor::poison_outputs() {
  for (TensorId t : poisoned_) GEXEC_TRY(device_.poison(address(t), size_t(graph_.tensor(t).bytes())));
  return {};
}

Status Executor::run_checked() {
  GEXEC_TRY(poison_outputs());
  GEXEC_TRY(enqueue());
  GEXEC_TRY(device_.synchronize());
  return after_runs();
}

Status Executor::after_runs() {
  size_t k = 0;
  for (const Op& op : graph_.ops) {
    if (op.hoisted) continue;
    if (Status s = kernels_[k++]->after_run(); !s) return s.error().with("running op " + op.name);
  }
  return {};
}

// once_ holds the hoisted ops and kernels_ the others, each in op order.
std::vector<std::string> Executor::notes() const {
  std::vector<std::string> out;
  size_t once = 0, every = 0;
  for (const Op& op : graph_.ops) {
    const Kernel& k = op.hoisted ? *once_[once++] : *kernels_[every++];
    const std::string n = k.note();
    if (!n.empty()) out.push_back("op " + op.name + ": " + n);
  }
  return out;
}

Precision Executor::precision() const {
  Precision p;
  for (const auto& k : kernels_) p.merge(k->precision());
  for (const auto& k : once_) p.merge(k->precision());
  return p;
}

Result<std::vector<uint8_t>> Executor::read(TensorId t) const {
  if (!has_buffer(t))
    return runtime_error("internal: tensor " + graph_.tensor(t).name + " has no buffer (no op reads or writes it)");
  std::vector<uint8_t> bytes;
  assign_zeros(bytes, size_t(graph_.tensor(t).bytes()));  // a large output's pages faulted in on all threads
  Status s = device_.download(bytes.data(), address(t), bytes.size());
  if (!s) return s.error().with("reading " + graph_.tensor(t).name);
  return bytes;
}

}  // namespace gexec
