// The generic selector: checks each candidate's declared capabilities, then its own check.
#include "gexec/kernels/select.hpp"

#include <algorithm>
#include <sstream>

#include "gexec/build_info.hpp"
#include "gexec/kernels/table.hpp"

namespace gexec {
namespace {

bool contains(const std::vector<DType>& ts, DType t) { return std::find(ts.begin(), ts.end(), t) != ts.end(); }

std::string list(const std::vector<DType>& ts) {
  std::string s;
  for (DType t : ts) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
  return s;
}

// The reason a kernel's declared capabilities exclude the op, or empty.
std::string declared_rejection(const KernelDef& k, const Graph& g, const Op& op, const DeviceCaps& caps) {
  if (k.min_cc && caps.cc < k.min_cc)
    return "needs sm_" + std::to_string(k.min_cc) + " or newer, the device is sm_" + std::to_string(caps.cc);
  // A CUDA kernel needs this binary's CUDA code to run on the device (src/kernels/fatbin.cpp). A
  // build without the CUDA backend launches nothing on a GPU; its dry-runs plan as a CUDA build would.
  std::string fatbin_why;
  if (k.backend == Backend::cuda && build_info().cuda && !fatbin_runs_on(caps.cc, &fatbin_why)) return fatbin_why;
  for (size_t i = 0; i < op.inputs.size() && i < k.inputs.size(); ++i) {
    const Tensor& t = g.tensor(op.inputs[i]);
    if (!k.inputs[i].empty() && !contains(k.inputs[i], t.dtype))
      return "input " + std::to_string(i) + " (" + t.name + ") is " + std::string(dtype_name(t.dtype)) +
             "; it takes " + list(k.inputs[i]);
  }
  for (TensorId id : op.outputs) {
    const Tensor& t = g.tensor(id);
    if (!k.outputs.empty() && !contains(k.outputs, t.dtype))
      return "output " + t.name + " is " + std::string(dtype_name(t.dtype)) + "; it writes " + list(k.outputs);
  }
  bool colmajor = false, rank3 = false;
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (TensorId id : *ids) {
      colmajor |= g.tensor(id).layout == Layout::colmajor;
      rank3 |= g.tensor(id).rank() == 3;
    }
  if (colmajor && !k.colmajor) return "colmajor operands are not supported";
  bool gemm = op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT;
  if (gemm && (op.attrs.trans_a || op.attrs.trans_b) && !k.transposes) return "transposed operands are not supported";
  if (gemm && rank3 && !k.batched) return "batched products are not supported";
  if (op.type == OpType::GEMM_BIAS_ACT && std::find(k.acts.begin(), k.acts.end(), op.attrs.act) == k.acts.end())
    return "activation " + std::string(act_name(op.attrs.act)) + " is not supported";
  if (k.align_bytes > kArenaAlignment)
    return "needs " + std::to_string(k.align_bytes) + "-byte alignment, the arena gives " +
           std::to_string(kArenaAlignment);
  return {};
}

// The kernel --kernel forces for `op` on `backend`, or null: an op named explicitly is held to its
// kernel whatever it is (a kernel of another op type or backend then leaves it without one, with
// the reason); "*" applies only where the kernel is declared for the op's type on this backend.
const std::string* forced_here(const KernelOptions& options, const Op& op, Backend backend) {
  const std::string* f = options.forced_for(op);
  if (!f || options.forced.count(op.name)) return f;
  for (const KernelDef& k : kernel_table())
    if (k.name == *f && k.backend == backend && k.op == op.type) return f;
  return nullptr;
}

// The table's kernel of that name, or null (parse_forced_kernel admits no other into --kernel).
const KernelDef* kernel_named(const std::string& name) {
  const auto k = std::find_if(kernel_table().begin(), kernel_table().end(), [&](const KernelDef& d) { return d.name == name; });
  return k == kernel_table().end() ? nullptr : &*k;
}

// --kernel that names what no op of g is: an op name the graph (after the passes) lacks, or a
// "*" whose kernel is declared for none of its ops on this backend. A usage error, not ignored.
Status check_forced(const Graph& g, Backend backend, const KernelOptions& options) {
  for (const auto& forced : options.forced) {
    // Named, not bound: clang before 16 refuses structured bindings captured by a lambda.
    const std::string& name = forced.first;
    const std::string& kernel = forced.second;
    if (name != "*") {
      if (std::none_of(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.name == name; })) {
        std::string ops;  // only for the message: selection runs on graphs of 100,000 ops
        for (const Op& op : g.ops) ops += (ops.empty() ? "" : ", ") + op.name;
        return bad_input("--kernel " + name + "=" + kernel + ": the graph has no op " + name +
                         " after the passes (its ops: " + ops + "; --passes none keeps the ops as written)");
      }
      continue;
    }
    if (std::none_of(g.ops.begin(), g.ops.end(), [&](const Op& op) { return forced_here(options, op, backend); })) {
      const KernelDef* k = kernel_named(kernel);
      if (!k) return bad_input("--kernel: no kernel \"" + kernel + "\"");
      return bad_input("--kernel " + kernel + ": it runs " + std::string(op_type_name(k->op)) + " on the " +
                       std::string(backend_name(k->backend)) + " backend, and no op of this " +
                       std::string(backend_name(backend)) + " run is one");
    }
  }
  return {};
}

// Why the kernel --kernel forces for `op` by name is not among its candidates at all.
std::string forced_elsewhere(const std::string& kernel, const Op& op, Backend backend) {
  const KernelDef* k = kernel_named(kernel);
  if (!k) return {};
  if (k->backend != backend)
    return "forced by --kernel, but it is a " + std::string(backend_name(k->backend)) + " kernel and this run is on " +
           std::string(backend_name(backend));
  if (k->op != op.type)
    return "forced by --kernel, but it runs " + std::string(op_type_name(k->op)) + ", not " + std::string(op_type_name(op.type));
  return {};
}

}  // namespace

Result<Selection> select_kernels(const Graph& g, const DeviceCaps& caps, Backend backend,
                                 const KernelOptions& options) {
  GEXEC_TRY(check_forced(g, backend, options));
  Selection sel;
  sel.backend = backend;
  sel.options = options;
  sel.ops.resize(g.ops.size());
  std::string missing;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    OpChoice& choice = sel.ops[i];
    const std::string* forced = forced_here(options, op, backend);
    for (const KernelDef& k : kernel_table()) {  // already in priority order
      if (k.backend != backend || k.op != op.type) continue;
      if (forced && k.name != *forced) {
        choice.rejected.push_back({k.name, "not the kernel forced by --kernel (" + *forced + ")"});
        continue;
      }
      if (choice.kernel) {
        choice.rejected.push_back({k.name, "not tried: " + choice.kernel->name + " was taken first"});
        continue;
      }
      std::string why = declared_rejection(k, g, op, caps);
      Verdict v;
      if (why.empty() && k.check) {
        v = k.check(g, op, caps, options);
        why = v.rejected;
      }
      if (!why.empty()) {
        choice.rejected.push_back({k.name, why});
        continue;
      }
      choice.kernel = &k;
      choice.notes = std::move(v.notes);
    }
    if (!choice.kernel && forced)
      if (std::string why = forced_elsewhere(*forced, op, backend); !why.empty()) choice.rejected.push_back({*forced, why});
    if (!choice.kernel) {
      missing += "\nop " + op.name + " (" + std::string(op_type_name(op.type)) + "): no " +
                 std::string(backend_name(backend)) + " kernel accepts it";
      for (const Rejection& r : choice.rejected) missing += "\n  " + r.kernel + ": " + r.reason;
    }
  }
  if (!missing.empty()) return runtime_error("kernel selection failed:" + missing);
  return sel;
}

std::string print_selection(const Graph& g, const Selection& s) {
  std::ostringstream os;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const OpChoice& c = s.ops[i];
    os << "  " << g.ops[i].name << " (" << op_type_name(g.ops[i].type) << ")" << (g.ops[i].hoisted ? " [once]" : "")
       << " -> " << (c.kernel ? c.kernel->name : std::string("none")) << "\n";
    for (const std::string& n : c.notes) os << "      note: " << n << "\n";
    for (const Rejection& r : c.rejected) os << "      rejected " << r.kernel << ": " << r.reason << "\n";
  }
  return os.str();
}

}  // namespace gexec
