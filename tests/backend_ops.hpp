// The backend-ops harness (after ggml's test-backend-ops): for every kernel of kernel_table(),
// the cases its declaration allows (each declared dtype, layout, transpose, batching and
// activation), each run through the real selector, planner and executor on a backend and
// compared with the CPU reference under the output dtype's tolerance. Shared by the unit tests
// (CPU backend) and the GPU tests (CUDA backend).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/kernels/table.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "unit/graph_builder.hpp"

namespace gexec::test {

struct OpCase {
  std::string what;  // for failure messages
  Graph graph;       // one op (or a chain, for special cases) with its outputs
};

// What one case gave: an error where it could not run, else one check per output.
struct CaseResult {
  std::string error;
  std::string kernel;  // the kernel the selector chose for the first op
  std::vector<OutputCheck> checks;
  bool pass() const {
    if (!error.empty() || checks.empty()) return false;
    for (const OutputCheck& c : checks)
      if (!c.pass || c.count <= 0) return false;
    return true;
  }
  std::string describe() const {
    std::string s = error.empty() ? "" : "error: " + error;
    for (const OutputCheck& c : checks)
      s += "\n  " + c.name + " " + std::string(dtype_name(c.dtype)) + ": beyond " + std::to_string(c.beyond) + " of " +
           std::to_string(c.checked) + ", max_abs " + std::to_string(c.max_abs) + ", worst got " +
           std::to_string(c.worst_got) + " ref " + std::to_string(c.worst_ref);
    return s;
  }
};

inline bool is_gemm(OpType t) { return t == OpType::MATMUL || t == OpType::GEMM_BIAS_ACT; }

// Selects, plans and executes `g` on `dev` (the checked run twice, as repeated runs would), and
// compares every output with the reference of `reference` (the same graph unless given: a
// different one shows that a check can fail) from the inputs exactly as the device saw them.
inline CaseResult run_case(Device& dev, const Graph& g, const Graph* reference = nullptr) {
  CaseResult r;
  auto sel = select_kernels(g, dev.caps(), dev.backend());
  if (!sel) return r.error = sel.error().message, r;
  r.kernel = sel->ops.empty() || !sel->ops[0].kernel ? "" : sel->ops[0].kernel->name;
  auto ex = Executor::create(dev, g, *sel, plan_buffers(g), 1234);
  if (!ex) return r.error = ex.error().message, r;
  for (int run = 0; run < 2; ++run)
    if (Status s = (*ex)->run_checked(); !s) return r.error = s.error().message, r;
  std::map<std::string, std::vector<uint8_t>> inputs;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    auto bytes = (*ex)->read(TensorId(t));
    if (!bytes) return r.error = bytes.error().message, r;
    inputs[g.tensors[t].name] = std::move(*bytes);
  }
  // As the app does: the bound follows the arithmetic the prepared kernels declare (TF32
  // products, the unfused path's extra rounding, the approximate GELU epilogue).
  Precision precision = (*ex)->precision();
  auto ref = run_reference(reference ? *reference : g, inputs, {}, precision);
  if (!ref) return r.error = ref.error().message, r;
  for (TensorId id : g.outputs) {
    const Tensor& t = g.tensor(id);
    auto got = (*ex)->read(id);
    if (!got) return r.error = got.error().message, r;
    r.checks.push_back(compare_output(t, got->data(), ref->at(t.name), default_tolerance(t.dtype)));
  }
  return r;
}

namespace detail {

struct GemmCase {
  DType a = DType::f32, b = DType::f32, c = DType::f32, bias = DType::f32;
  bool bias_present = true, bias_constant = false, b_constant = false;
  Act act = Act::none;
  bool trans_a = false, trans_b = false;
  Layout la = Layout::rowmajor, lb = Layout::rowmajor, lc = Layout::rowmajor;
  int64_t batch = 0;  // 0: rank 2; else rank-3 A and C
  bool shared_b = false;
  int64_t m = 24, n = 40, k = 32;
  double alpha = 1.0;
};

inline OpCase gemm_graph(OpType type, const GemmCase& c, const std::string& what) {
  Builder b;
  auto dims = [&](int64_t rows, int64_t cols, bool trans, bool batched) {
    std::vector<int64_t> d = trans ? std::vector<int64_t>{cols, rows} : std::vector<int64_t>{rows, cols};
    if (batched) d.insert(d.begin(), c.batch);
    return d;
  };
  const bool batched = c.batch > 0;
  TensorId a = b.tensor("A", dims(c.m, c.k, c.trans_a, batched), c.a, c.la);
  TensorId bb = b.tensor("B", dims(c.k, c.n, c.trans_b, batched && !c.shared_b), c.b, c.lb);
  b.g.tensor(bb).constant = c.b_constant;
  std::vector<TensorId> in = {a, bb};
  if (type == OpType::GEMM_BIAS_ACT && c.bias_present) {
    in.push_back(b.tensor("Bias", {c.n}, c.bias));
    b.g.tensor(in.back()).constant = c.bias_constant;
  }
  TensorId out = b.tensor("C", dims(c.m, c.n, false, batched), c.c, c.lc);
  Op& op = b.op(type, in, out);
  op.attrs.trans_a = c.trans_a;
  op.attrs.trans_b = c.trans_b;
  op.attrs.alpha = c.alpha;
  if (type == OpType::GEMM_BIAS_ACT) op.attrs.act = c.act;
  b.g.outputs = {out};
  return {what, b.g};
}

inline std::vector<OpCase> gemm_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  const std::vector<DType> a_types = def.inputs.empty() ? std::vector<DType>{} : def.inputs[0];
  const std::vector<DType> b_types = def.inputs.size() > 1 ? def.inputs[1] : a_types;
  const bool bias = def.op == OpType::GEMM_BIAS_ACT;
  const Act act0 = def.acts.empty() ? Act::none : def.acts.back();
  auto name = [](DType t) { return std::string(dtype_name(t)); };
  // Every input dtype with every output dtype (B like A), then every B dtype against A's first.
  for (DType a : a_types)
    for (DType c : def.outputs) {
      GemmCase g;
      g.a = g.b = a;
      g.c = g.bias = c;
      g.act = act0;
      cases.push_back(gemm_graph(def.op, g, "A,B " + name(a) + " -> C " + name(c)));
    }
  for (DType bt : b_types) {
    GemmCase g;
    g.a = a_types.front();
    g.b = bt;
    g.c = g.bias = def.outputs.front();
    cases.push_back(gemm_graph(def.op, g, "A " + name(g.a) + ", B " + name(bt) + " -> C " + name(g.c)));
  }
  if (bias && def.inputs.size() > 2)
    for (DType bt : def.inputs[2])
      for (DType c : def.outputs) {
        GemmCase g;
        g.a = g.b = DType::f16;
        g.c = c;
        g.bias = bt;
        g.act = act0;
        cases.push_back(gemm_graph(def.op, g, "f16 product, bias " + name(bt) + " -> C " + name(c)));
      }
  for (Act act : def.acts) {
    GemmCase g;
    g.act = act;
    cases.push_back(gemm_graph(def.op, g, "act " + std::string(act_name(act))));
  }
  if (bias) {
    GemmCase g;
    g.bias_present = false;
    g.act = act0;
    cases.push_back(gemm_graph(def.op, g, "no bias"));
    // Constants are converted (or copied) once, before the runs, rather than in every run.
    g.bias_present = true;
    g.bias_constant = g.b_constant = true;
    g.a = g.b = DType::f16;
    g.c = DType::bf16;
    g.bias = DType::f32;
    cases.push_back(gemm_graph(def.op, g, "constant B and f32 bias, f16 product -> bf16"));
  }
  if (def.transposes)
    for (auto [ta, tb] : {std::pair{true, false}, {false, true}, {true, true}}) {
      GemmCase g;
      g.trans_a = ta;
      g.trans_b = tb;
      g.a = g.b = DType::f16;
      cases.push_back(gemm_graph(def.op, g, std::string("trans_a ") + (ta ? "1" : "0") + " trans_b " + (tb ? "1" : "0")));
    }
  if (def.colmajor)
    for (int which = 0; which < 4; ++which) {
      GemmCase g;
      g.a = g.b = DType::f16;
      g.c = DType::f16;
      g.bias = DType::f16;
      g.act = act0;
      (which == 0 ? g.la : which == 1 ? g.lb : which == 2 ? g.lc : g.la) = Layout::colmajor;
      if (which == 3) g.lb = g.lc = Layout::colmajor, g.trans_b = def.transposes;
      cases.push_back(gemm_graph(def.op, g, std::string("colmajor ") + (which == 0 ? "A" : which == 1 ? "B" : which == 2 ? "C" : "A, B (transposed) and C")));
    }
  // Every transpose with every layout at once, with alpha and mixed input dtypes.
  if (def.transposes && def.colmajor)
    for (int mask = 0; mask < 32; ++mask) {
      GemmCase g;
      g.trans_a = mask & 1;
      g.trans_b = mask & 2;
      g.la = mask & 4 ? Layout::colmajor : Layout::rowmajor;
      g.lb = mask & 8 ? Layout::colmajor : Layout::rowmajor;
      g.lc = mask & 16 ? Layout::colmajor : Layout::rowmajor;
      g.a = a_types.front();
      g.b = b_types.back();
      g.c = def.outputs[size_t(mask) % def.outputs.size()];
      g.bias = g.c;
      g.m = 33, g.n = 18, g.k = 27;
      g.alpha = 0.75;
      g.act = act0;
      cases.push_back(gemm_graph(def.op, g, "transposes and layouts, mask " + std::to_string(mask)));
    }
  if (def.batched && def.transposes && def.colmajor) {
    GemmCase g;  // one B for every batch entry, stored transposed and colmajor; negative alpha
    g.batch = 3;
    g.shared_b = true;
    g.trans_b = true;
    g.lb = Layout::colmajor;
    g.a = DType::bf16;
    g.b = b_types.back();
    g.c = g.bias = DType::bf16;
    g.m = 21, g.n = 24, g.k = 16;
    g.alpha = -1.5;
    cases.push_back(gemm_graph(def.op, g, "batched, shared colmajor transposed B, alpha -1.5"));
  }
  if (def.batched)
    for (bool shared : {false, true}) {
      GemmCase g;
      g.batch = 3;
      g.shared_b = shared;
      g.a = g.b = DType::bf16;
      g.act = act0;
      g.trans_b = shared && def.transposes;
      cases.push_back(gemm_graph(def.op, g, shared ? "batched A, shared B" : "batched A and B"));
    }
  {
    GemmCase g;  // odd sizes: nothing aligned
    g.m = 7;
    g.n = 5;
    g.k = 3;
    g.a = g.b = g.c = g.bias = DType::f16;
    g.alpha = 0.5;
    g.act = act0;
    cases.push_back(gemm_graph(def.op, g, "7x5x3, alpha 0.5"));
    g.m = 130;  // several blocks, threads on the CPU
    g.n = 96;
    g.k = 200;
    g.alpha = 1;
    cases.push_back(gemm_graph(def.op, g, "130x96x200"));
  }
  return cases;
}

inline OpCase elementwise_graph(OpType type, DType x_t, DType second_t, DType out_t, Layout lx, Layout l2, Layout lout,
                                int64_t rows, int64_t cols, GeluApprox approx, const std::string& what) {
  Builder b;
  TensorId x = b.tensor("X", {rows, cols}, x_t, lx);
  std::vector<TensorId> in = {x};
  if (type == OpType::BIAS_ADD) in.push_back(b.tensor("b", {cols}, second_t));
  if (type == OpType::ADD) in.push_back(b.tensor("Y", {rows, cols}, second_t, l2));
  TensorId y = b.tensor("Z", {rows, cols}, out_t, lout);
  Op& op = b.op(type, in, y);
  op.attrs.approximate = approx;
  b.g.outputs = {y};
  return {what, b.g};
}

inline std::vector<OpCase> elementwise_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  const OpType t = def.op;
  if (def.inputs.empty()) return cases;
  const bool binary = def.inputs.size() > 1;
  const Layout row = Layout::rowmajor, col = Layout::colmajor;
  auto name = [](DType d) { return std::string(dtype_name(d)); };
  std::vector<GeluApprox> approx = {GeluApprox::tanh};
  if (t == OpType::GELU) approx.push_back(GeluApprox::none);
  for (GeluApprox ap : approx) {
    const std::string form = t == OpType::GELU ? (ap == GeluApprox::none ? " erf" : " tanh") : "";
    for (DType x : def.inputs[0])
      for (DType out : def.outputs)
        cases.push_back(elementwise_graph(t, x, out, out, row, row, row, 7, 5, ap, name(x) + " -> " + name(out) + form));
  }
  if (binary)
    for (DType second : def.inputs[1])
      cases.push_back(elementwise_graph(t, DType::f32, second, DType::f16, row, row, row, 7, 5, GeluApprox::tanh,
                                        "second operand " + name(second)));
  if (def.colmajor) {
    cases.push_back(elementwise_graph(t, DType::f16, DType::f32, DType::bf16, col, row, row, 9, 6, GeluApprox::tanh,
                                      "colmajor X"));
    cases.push_back(elementwise_graph(t, DType::f32, DType::f16, DType::f16, row, col, col, 9, 6, GeluApprox::tanh,
                                      "colmajor second operand and output"));
  }
  // Sizes that take vector paths, several blocks or threads: 60000 elements.
  cases.push_back(elementwise_graph(t, DType::f16, DType::f16, DType::f16, row, row, row, 300, 200, GeluApprox::tanh,
                                    "300x200"));
  cases.push_back(elementwise_graph(t, DType::bf16, DType::f32, DType::f32, def.colmajor ? col : row, row, row, 300, 200,
                                    GeluApprox::tanh, "300x200 mixed"));
  return cases;
}

}  // namespace detail

// The cases a declaration allows; empty for an op type the harness does not know yet, which the
// tests report as a failure (every table entry must have a case).
inline std::vector<OpCase> cases_for(const KernelDef& def) {
  if (is_gemm(def.op)) return detail::gemm_cases(def);
  switch (def.op) {
    case OpType::BIAS_ADD:
    case OpType::ADD:
    case OpType::RELU:
    case OpType::GELU:
    case OpType::CAST: return detail::elementwise_cases(def);
    default: break;
  }
  return {};
}

}  // namespace gexec::test
