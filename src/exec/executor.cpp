// The executor: a short fixed set-up sequence, then runs that only launch kernels.
#include "gexec/exec/executor.hpp"

namespace gexec {

void* Executor::address(TensorId t) const { return base_ + offset_[size_t(t)]; }

Result<std::unique_ptr<Executor>> Executor::create(Device& device, Graph graph, const Selection& selection,
                                                   const BufferPlan& plan, uint64_t seed,
                                                   const std::map<std::string, std::vector<uint8_t>>* host_inputs) {
  std::unique_ptr<Executor> ex(new Executor(device, std::move(graph)));
  const Graph& g = ex->graph_;
  ex->offset_ = plan.offset;

  auto arena = device.allocate_arena(plan.arena_bytes);
  if (!arena) return arena.error();
  ex->base_ = static_cast<char*>(*arena);

  const GraphIndex idx(g);
  // Outputs written in every run are poisoned before it; inputs and hoisted results are not.
  for (TensorId t : g.outputs) {
    const OpId p = idx.producer[size_t(t)];
    if (p != kNone && !g.ops[size_t(p)].hoisted) ex->poisoned_.push_back(t);
  }
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t)) || plan.offset[t] < 0) continue;
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
    } else {
      s = device.fill_input(tensor, ex->address(TensorId(t)), seed);
    }
    if (!s) return s.error().with("initialising input " + g.tensors[t].name);
  }

  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    auto k = device.make_kernel(*selection.ops[i].kernel, g, op, ex->binding_of(op));
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

Binding Executor::binding_of(const Op& op) const {
  Binding b;
  for (TensorId t : op.inputs) b.inputs.push_back(address(t));
  for (TensorId t : op.outputs) b.outputs.push_back(address(t));
  return b;
}

Status Executor::enqueue() {
  size_t k = 0;
  for (const Op& op : graph_.ops) {
    if (op.hoisted) continue;
    Status s = kernels_[k++]->run();
    if (!s) return s.error().with("running op " + op.name);
  }
  return {};
}

Status Executor::run_checked() {
  for (TensorId t : poisoned_) {
    Status s = device_.poison(address(t), size_t(graph_.tensor(t).bytes()));
    if (!s) return s;
  }
  GEXEC_TRY(enqueue());
  return device_.synchronize();
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
  std::vector<uint8_t> bytes(size_t(graph_.tensor(t).bytes()));
  Status s = device_.download(bytes.data(), address(t), bytes.size());
  if (!s) return s.error().with("reading " + graph_.tensor(t).name);
  return bytes;
}

}  // namespace gexec
