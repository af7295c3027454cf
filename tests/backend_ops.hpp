// The backend-ops harness (after ggml's test-backend-ops): for every kernel of kernel_table(),
// the cases its declaration allows (each declared dtype, layout, transpose, batching, activation
// and residual; for FUSED_ELEMENTWISE, groups of every step type), each run through the real
// selector, planner and executor on a backend (a PreparedRun, as `gexec run` prepares one) and
// compared with the CPU reference under the output dtype's tolerance. Shared by the unit tests (CPU backend) and the GPU tests (CUDA backend).
// f8 declarations get their own cases (scales, fast accumulation, amax outputs, the TN
// arrangement); a case the declaration's check refuses (e.g. a colmajor f8 C on cuBLASLt) is not
// one of its cases.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gexec/app/prepared_run.hpp"
#if GEXEC_HAVE_CUDA
#include "gexec/backends/cuda_device.hpp"
#endif
#include "gexec/exec/executor.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/kernels/table.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "grouped_case.hpp"
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
// `kernel`, where given, is forced for every op (--kernel *=NAME): a kernel that a cost model
// would pass over for a small case still runs it. `edit`, where given, changes the inputs the
// reference reads (data such as GROUPED_GEMM's offsets: the reference of other data).
using InputEdit = std::function<void(std::map<std::string, std::vector<uint8_t>>&)>;
// A graph with collectives runs over one rank: the device joins a one-rank communicator (host
// memory on the CPU, NCCL on CUDA device 0, the harness's) where it has none.
inline Status join_one_rank(Device& dev, const Graph& g) {
  if (dev.communicator() || std::none_of(g.ops.begin(), g.ops.end(), [](const Op& op) { return is_collective(op.type); }))
    return {};
  if (dev.backend() == Backend::cpu) {
    dev.join(std::make_shared<HostCommunicator>(1), 0);
    return {};
  }
#if GEXEC_HAVE_CUDA
  auto comm = open_nccl_communicator({0});
  if (!comm) return comm.error();
  dev.join(*comm, 0);
  return {};
#else
  return runtime_error("a CUDA device in a build without the CUDA backend");
#endif
}

inline CaseResult run_case(Device& dev, const Graph& g, const Graph* reference = nullptr, const std::string& kernel = {},
                           const InputEdit& edit = {}) {
  CaseResult r;
  // Prepared as a run is (the graph as written: no passes), on the harness's device.
  PrepareOptions options;
  options.passes = "none";
  options.seed = 1234;
  if (!kernel.empty()) options.kernel.forced["*"] = kernel;
  PreparedRun run(g, options);
  std::ostringstream prints;
  if (Status s = run.run_passes(prints); !s) return r.error = s.error().message, r;
  if (Status s = run.choose_target(&dev); !s) return r.error = s.error().message, r;
  if (Status s = join_one_rank(dev, g); !s) return r.error = s.error().message, r;
  if (Status s = run.select(); !s) return r.error = s.error().message, r;
  const Selection& sel = run.selection();
  r.kernel = sel.ops.empty() || !sel.ops[0].kernel ? "" : sel.ops[0].kernel->name;
  if (Status s = run.create_executor(); !s) return r.error = s.error().message, r;
  Executor& ex = run.executor();
  for (int i = 0; i < 2; ++i)
    if (Status s = run.run(); !s) return r.error = s.error().message, r;
  std::map<std::string, std::vector<uint8_t>> inputs;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    auto bytes = ex.read(TensorId(t));
    if (!bytes) return r.error = bytes.error().message, r;
    inputs[g.tensors[t].name] = std::move(*bytes);
  }
  // As the app does: the bound follows the arithmetic the prepared kernels declare (TF32
  // products, the unfused path's extra rounding, the approximate GELU epilogue).
  Precision precision = ex.precision();
  if (edit) edit(inputs);
  auto ref = run_reference(reference ? *reference : g, inputs, {}, precision);
  if (!ref) return r.error = ref.error().message, r;
  for (TensorId id : g.outputs) {
    const Tensor& t = g.tensor(id);
    auto got = ex.read(id);
    if (!got) return r.error = got.error().message, r;
    r.checks.push_back(compare_output(t, got->data(), ref->at(t.name), output_tolerance(t)));
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
  Scale sa, sb, sc;        // f8 operands' and output's scales
  bool fast_accum = false;
  bool amax = false;       // a second output, the f32 [1] amax of an f8 C
  bool residual = false;  // GEMM_BIAS_ACT's last input R, times beta (graph-format.md)
  DType r = DType::f32;
  Layout lr = Layout::rowmajor;
  double beta = 1.0;
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
  b.g.tensor(a).scale = c.sa;
  b.g.tensor(bb).scale = c.sb;
  std::vector<TensorId> in = {a, bb};
  if (type == OpType::GEMM_BIAS_ACT && c.bias_present) {
    in.push_back(b.tensor("Bias", {c.n}, c.bias));
    b.g.tensor(in.back()).constant = c.bias_constant;
  }
  if (type == OpType::GEMM_BIAS_ACT && c.residual) in.push_back(b.tensor("R", dims(c.m, c.n, false, batched), c.r, c.lr));
  TensorId out = b.tensor("C", dims(c.m, c.n, false, batched), c.c, c.lc);
  b.g.tensor(out).scale = c.sc;
  Op& op = b.op(type, in, out);
  op.attrs.trans_a = c.trans_a;
  op.attrs.trans_b = c.trans_b;
  op.attrs.alpha = c.alpha;
  op.attrs.fast_accum = c.fast_accum;
  if (type == OpType::GEMM_BIAS_ACT) op.attrs.act = c.act;
  if (type == OpType::GEMM_BIAS_ACT && c.residual) op.attrs.residual = true, op.attrs.beta = c.beta;
  b.g.outputs = {out};
  if (c.amax) {
    const TensorId amax = b.tensor("Amax", {1}, DType::f32);
    b.g.ops.back().outputs.push_back(amax);
    b.g.outputs.push_back(amax);
  }
  return {what, b.g};
}

// The dtypes of `types` that are (or are not) f8.
inline std::vector<DType> f8_of(const std::vector<DType>& types, bool f8) {
  std::vector<DType> r;
  for (DType t : types)
    if (is_f8(t) == f8) r.push_back(t);
  return r;
}

inline Scale per_axis(int axis, int64_t count, double base) {
  Scale s;
  s.axis = axis;
  s.values.clear();
  for (int64_t i = 0; i < count; ++i) s.values.push_back(base * double(1 + i % 3));
  return s;
}

inline Scale tensor_scale(double v) {
  Scale s;
  s.values = {v};
  return s;
}

// The f8 cases of a product declaration whose A takes f8: mostly M, N, K multiples of 16 (cuBLASLt's
// FP8 needs them), real values through tensor-wide and per-row / per-column scales.
inline std::vector<OpCase> fp8_gemm_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  const std::vector<DType> f8a = f8_of(def.inputs[0], true);
  const std::vector<DType> f8b = def.inputs.size() > 1 ? f8_of(def.inputs[1], true) : f8a;
  if (f8a.empty() || f8b.empty()) return cases;
  const bool bias = def.op == OpType::GEMM_BIAS_ACT;
  const Act act0 = def.acts.empty() ? Act::none : def.acts.back();
  auto has = [&def](DType t) { return std::find(def.outputs.begin(), def.outputs.end(), t) != def.outputs.end(); };
  auto name = [](DType t) { return std::string(dtype_name(t)); };
  auto base = [&] {
    GemmCase g;
    g.a = g.b = DType::f8e4m3;
    g.c = has(DType::bf16) ? DType::bf16 : def.outputs.front();
    g.bias = DType::f32;
    g.m = 32, g.n = 48, g.k = 64;
    g.sa = tensor_scale(0.5);
    g.sb = tensor_scale(0.25);
    g.act = act0;
    return g;
  };
  // Every operand pairing with every output (an f8e5m2 C only beside an f8e5m2 operand).
  for (DType a : f8a)
    for (DType b : f8b) {
      if (a == DType::f8e5m2 && b == DType::f8e5m2) continue;  // refused by the graph format
      for (DType c : def.outputs) {
        if (c == DType::f8e5m2 && a != DType::f8e5m2 && b != DType::f8e5m2) continue;
        GemmCase g = base();
        g.a = a, g.b = b, g.c = c;
        if (is_f8(c)) g.sc = tensor_scale(4.0);
        cases.push_back(gemm_graph(def.op, g, "f8: A " + name(a) + ", B " + name(b) + " -> C " + name(c)));
      }
    }
  if (bias && def.inputs.size() > 2)
    for (DType bt : f8_of(def.inputs[2], false))
      for (DType c : {DType::bf16, DType::f16})
        if (has(c)) {
          GemmCase g = base();
          g.bias = bt, g.c = c;
          cases.push_back(gemm_graph(def.op, g, "f8: bias " + name(bt) + " -> C " + name(c)));
        }
  for (Act act : def.acts) {
    GemmCase g = base();
    g.act = act;
    cases.push_back(gemm_graph(def.op, g, "f8: act " + std::string(act_name(act))));
    g.fast_accum = true;
    cases.push_back(gemm_graph(def.op, g, "f8: act " + std::string(act_name(act)) + ", fast accumulation"));
  }
  for (DType c : {DType::bf16, DType::f32}) {
    GemmCase g = base();
    g.fast_accum = true;
    g.c = c;
    g.k = 512;  // a longer sum, where fewer accumulator bits show
    cases.push_back(gemm_graph(def.op, g, "f8: fast accumulation, K 512 -> C " + name(c)));
  }
  // An f8 C with its amax (taken before C's scale), after the activation.
  for (DType c : {DType::f8e4m3, DType::f8e5m2}) {
    GemmCase g = base();
    g.b = DType::f8e5m2;
    g.c = c;
    g.sc = tensor_scale(2.0);
    g.amax = true;
    if (has(c)) cases.push_back(gemm_graph(def.op, g, "f8: A f8e4m3, B f8e5m2 -> C " + name(c) + " with amax"));
  }
  {
    GemmCase g = base();
    g.c = DType::f8e4m3;
    g.sc = tensor_scale(8.0);  // large values saturate at 448 x 8
    g.amax = true;
    g.fast_accum = true;
    cases.push_back(gemm_graph(def.op, g, "f8: e4m3 -> C f8e4m3 with amax and fast accumulation"));
  }
  // Per-row A and per-column B scales (applied after the product), each alone and together.
  for (int which = 0; which < 3; ++which) {
    GemmCase g = base();
    if (which != 1) g.sa = per_axis(0, g.m, 0.125);
    if (which != 0) g.sb = per_axis(1, g.n, 0.0625);
    cases.push_back(gemm_graph(def.op, g, std::string("f8: ") + (which == 0 ? "per-row A scale" : which == 1 ? "per-column B scale" : "per-row A and per-column B scales")));
    g.fast_accum = true;
    g.c = DType::f16;
    cases.push_back(gemm_graph(def.op, g, std::string("f8: ") + (which == 0 ? "per-row A scale" : which == 1 ? "per-column B scale" : "per-row A and per-column B scales") + ", fast accumulation -> f16"));
  }
  // Per-M / per-N scales on transposed operands: A stored [K,M] per column, B stored [N,K] per row.
  if (def.transposes) {
    GemmCase g = base();
    g.trans_a = g.trans_b = true;
    g.sa = per_axis(1, g.m, 0.125);
    g.sb = per_axis(0, g.n, 0.0625);
    cases.push_back(gemm_graph(def.op, g, "f8: per-column A stored [K,M], per-row B stored [N,K]"));
    g.trans_a = false;
    g.sa = per_axis(0, g.m, 0.125);
    g.b_constant = true;
    cases.push_back(gemm_graph(def.op, g, "f8: per-row A, per-row constant B stored [N,K]"));
  }
  // Scales along K (A per column, B per row): they cannot be applied after the product.
  {
    GemmCase g = base();
    g.sa = per_axis(1, g.k, 0.25);
    g.sb = per_axis(0, g.k, 0.5);
    cases.push_back(gemm_graph(def.op, g, "f8: scales along K"));
  }
  // The TN arrangement: every transpose and layout of A and B, with a constant B copied once.
  if (def.transposes)
    for (auto [ta, tb] : {std::pair{true, false}, {false, true}, {true, true}}) {
      GemmCase g = base();
      g.trans_a = ta, g.trans_b = tb;
      cases.push_back(gemm_graph(def.op, g, std::string("f8: trans_a ") + (ta ? "1" : "0") + " trans_b " + (tb ? "1" : "0")));
    }
  if (def.colmajor)
    for (int which = 0; which < 4; ++which) {
      GemmCase g = base();
      if (which == 0 || which == 2) g.la = Layout::colmajor;
      if (which == 1 || which == 2) g.lb = Layout::colmajor;
      if (which == 3) g.lc = Layout::colmajor;
      cases.push_back(gemm_graph(def.op, g, std::string("f8: colmajor ") + (which == 0 ? "A" : which == 1 ? "B" : which == 2 ? "A and B" : "C")));
    }
  for (bool tb : {false, true}) {
    GemmCase g = base();
    g.b_constant = true;
    g.bias_constant = bias;
    g.trans_b = tb && def.transposes;
    cases.push_back(gemm_graph(def.op, g, std::string("f8: constant B") + (g.trans_b ? " stored [N,K]" : " [K,N], copied transposed once") + (bias ? " and constant bias" : "")));
  }
  {
    GemmCase g = base();
    g.alpha = 0.75;
    g.sa = tensor_scale(0.3);
    g.sb = tensor_scale(0.07);
    g.c = DType::f32;
    cases.push_back(gemm_graph(def.op, g, "f8: alpha 0.75, scales not powers of two -> f32"));
    g = base();
    g.m = 128, g.n = 96, g.k = 256;
    cases.push_back(gemm_graph(def.op, g, "f8: 128x96x256"));
    g = base();
    g.m = 7, g.n = 5, g.k = 3;  // nothing aligned: cuBLASLt's FP8 runs it padded
    cases.push_back(gemm_graph(def.op, g, "f8: 7x5x3 (padded)"));
    g = base();
    g.m = 32, g.n = 40, g.k = 24;
    g.c = DType::f8e4m3;
    g.sc = tensor_scale(2.0);
    g.amax = true;
    cases.push_back(gemm_graph(def.op, g, "f8: 32x40x24 (N, K padded) -> f8e4m3 with amax"));
    g.m = 20;  // padded rows repeat A's last row: act(bias) rows would enter the amax
    g.act = Act::relu;
    cases.push_back(gemm_graph(def.op, g, "f8: 20x40x24 (M, N, K padded), bias, relu -> f8e4m3 with amax"));
    g = base();
    g.m = 20, g.n = 40, g.k = 24;
    g.b_constant = g.bias_constant = true;
    g.trans_a = def.transposes;
    g.sa = per_axis(g.trans_a ? 1 : 0, g.m, 0.125);  // A stored [K,M]: per column is per row of op(A)
    cases.push_back(gemm_graph(def.op, g, "f8: 20x40x24 (M, N, K padded), A stored [K,M] per-M scales, constant B"));
  }
  if (def.batched) {
    GemmCase g = base();
    g.batch = 3;
    g.shared_b = true;
    cases.push_back(gemm_graph(def.op, g, "f8: batched A, shared B"));
    g.shared_b = false;
    g.trans_b = def.transposes;
    g.fast_accum = true;
    cases.push_back(gemm_graph(def.op, g, "f8: batched A and B, fast accumulation"));
    g = base();
    g.batch = 2;
    g.shared_b = true;
    g.b_constant = true;
    g.m = 20, g.n = 40, g.k = 24;
    g.c = DType::f8e4m3;
    g.sc = tensor_scale(2.0);
    cases.push_back(gemm_graph(def.op, g, "f8: batched A, shared constant B, 20x40x24 (padded) -> f8e4m3"));
  }
  return cases;
}

// Whether the declaration's check takes the case (for what its fields cannot say, such as a
// residual stored otherwise than C).
inline bool check_accepts(const KernelDef& def, const OpCase& c) {
  KernelOptions forced;
  forced.forced["*"] = def.name;
  return !def.check || def.check(c.graph, c.graph.ops[0], DeviceCaps{}, forced).ok();
}

// GEMM_BIAS_ACT with a residual R as its fourth input: every R dtype with every C dtype, with
// and without a bias, each activation (inside it, as cuBLASLt adds C), beta, R stored otherwise
// than C, batched, and odd sizes.
inline void residual_cases(const KernelDef& def, Act act0, std::vector<OpCase>& cases) {
  auto name = [](DType t) { return std::string(dtype_name(t)); };
  for (DType r : f8_of(def.inputs[3], false))
    for (DType c : f8_of(def.outputs, false)) {  // an f8 product takes no residual
      GemmCase g;
      g.residual = true;
      g.a = g.b = c == DType::f32 ? DType::f16 : c;
      g.c = g.bias = c;
      g.r = r;
      g.act = act0;
      cases.push_back(gemm_graph(def.op, g, "residual " + name(r) + " -> C " + name(c)));
    }
  for (Act act : def.acts)
    for (double beta : {1.0, -0.75}) {
      GemmCase g;
      g.residual = true;
      g.a = g.b = g.c = g.bias = g.r = DType::f16;
      g.act = act;
      g.beta = beta;
      std::ostringstream what;
      what << "residual, act " << act_name(act) << ", beta " << beta;
      cases.push_back(gemm_graph(def.op, g, what.str()));
    }
  {
    GemmCase g;
    g.residual = true;
    g.bias_present = false;
    g.a = g.b = g.c = g.r = DType::bf16;
    g.beta = 0.5;
    cases.push_back(gemm_graph(def.op, g, "residual, no bias, beta 0.5"));
    g.act = act0;
    cases.push_back(gemm_graph(def.op, g, "residual, no bias, beta 0.5, act " + std::string(act_name(act0))));
  }
  if (def.colmajor)
    for (int which = 0; which < 3; ++which) {
      GemmCase g;
      g.residual = true;
      g.a = g.b = g.c = g.bias = g.r = DType::f16;
      g.act = act0;
      if (which != 1) g.lc = Layout::colmajor;  // 0: R and C colmajor (a bias tail after C on cuBLASLt)
      if (which != 2) g.lr = Layout::colmajor;  // 1: R only; 2: C only
      OpCase oc = gemm_graph(def.op, g, which == 0 ? "residual and C colmajor" : which == 1 ? "residual colmajor, C rowmajor"
                                                                                           : "residual rowmajor, C colmajor");
      if (which == 0 || check_accepts(def, oc)) cases.push_back(std::move(oc));
    }
  if (def.batched) {
    GemmCase g;
    g.residual = true;
    g.batch = 3;
    g.a = g.b = g.c = g.bias = DType::bf16;
    g.r = DType::f32;
    g.act = act0;
    cases.push_back(gemm_graph(def.op, g, "residual, batched A and B"));
  }
  {
    GemmCase g;  // misaligned rows: cuBLASLt reads R as C unpadded
    g.residual = true;
    g.m = 7, g.n = 5, g.k = 3;
    g.a = g.b = g.c = g.bias = g.r = DType::f16;
    g.act = act0;
    cases.push_back(gemm_graph(def.op, g, "residual, 7x5x3"));
    g.m = 130, g.n = 96, g.k = 200;
    cases.push_back(gemm_graph(def.op, g, "residual, 130x96x200"));
  }
}

inline std::vector<OpCase> gemm_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  if (def.inputs.empty()) return cases;
  // The f16/bf16/f32 cases read the declaration's float dtypes; its f8 dtypes have cases of their own.
  const std::vector<DType> a_types = f8_of(def.inputs[0], false);
  const std::vector<DType> b_types = def.inputs.size() > 1 ? f8_of(def.inputs[1], false) : a_types;
  const std::vector<DType> outputs = f8_of(def.outputs, false);
  if (a_types.empty() || b_types.empty() || outputs.empty()) return fp8_gemm_cases(def);
  const bool bias = def.op == OpType::GEMM_BIAS_ACT;
  const Act act0 = def.acts.empty() ? Act::none : def.acts.back();
  auto name = [](DType t) { return std::string(dtype_name(t)); };
  // Every input dtype with every output dtype (B like A), then every B dtype against A's first.
  for (DType a : a_types)
    for (DType c : outputs) {
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
    g.c = g.bias = outputs.front();
    cases.push_back(gemm_graph(def.op, g, "A " + name(g.a) + ", B " + name(bt) + " -> C " + name(g.c)));
  }
  if (bias && def.inputs.size() > 2)
    for (DType bt : def.inputs[2])
      for (DType c : outputs) {
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
  // Rows of 264 (33 chunks of 8: cuBLASLt's SiLU tail then runs row by row, ew_bias_rows),
  // with and without a bias, f16 and f32 bias against f16 and bf16 C, 3 and 70 rows.
  if (bias && std::find(def.acts.begin(), def.acts.end(), Act::silu) != def.acts.end())
    for (int which = 0; which < 3; ++which) {
      GemmCase g;
      g.a = g.b = DType::f16;
      g.m = which == 2 ? 70 : 3, g.n = 264;
      g.c = which == 1 ? DType::bf16 : DType::f16;
      g.bias = which == 1 ? DType::f32 : DType::f16;
      g.bias_present = which != 2;
      g.act = Act::silu;
      OpCase oc = gemm_graph(def.op, g, "act silu, " + std::to_string(g.m) + " rows of 264, " +
                                            (g.bias_present ? "bias " + name(g.bias) : "no bias") + " -> C " + name(g.c));
      if (check_accepts(def, oc)) cases.push_back(std::move(oc));
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
      g.c = outputs[size_t(mask) % outputs.size()];
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
  if (bias && def.transposes)
    for (int which = 0; which < 2; ++which) {
      // Tiles of a Hopper kernel (the one-group GEMM's WGMMA: K % 64, N % 128, M >= 64 with a
      // partial last tile): B [N,K], then a constant B [K,N] (copied transposed once), each
      // activation the declaration has last.
      GemmCase g;
      g.m = 200, g.n = 256, g.k = 128;
      g.a = g.b = which == 0 ? DType::f16 : DType::bf16;
      g.c = which == 0 ? DType::f16 : DType::f32;
      g.bias = DType::bf16;
      g.trans_b = which == 0;
      g.b_constant = which == 1;
      g.act = which == 0 ? act0 : def.acts.empty() ? Act::none : def.acts[def.acts.size() > 1 ? def.acts.size() - 2 : 0];
      cases.push_back(gemm_graph(def.op, g, std::string("200x256x128, ") + (which == 0 ? "B [N,K]" : "constant B [K,N]") +
                                                ", act " + std::string(act_name(g.act))));
    }
  if (bias && def.inputs.size() > 3) residual_cases(def, act0, cases);
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
  for (OpCase& c : fp8_gemm_cases(def)) cases.push_back(std::move(c));
  return cases;
}

// `constant`: the scalar second operand of ADD, SUB, MUL, DIV, or POW's exponent (2 when none).
inline OpCase elementwise_graph(OpType type, DType x_t, DType second_t, DType out_t, Layout lx, Layout l2, Layout lout,
                                int64_t rows, int64_t cols, GeluApprox approx, const std::string& what,
                                std::optional<double> constant = std::nullopt) {
  Builder b;
  TensorId x = b.tensor("X", {rows, cols}, x_t, lx);
  std::vector<TensorId> in = {x};
  if (type == OpType::BIAS_ADD) in.push_back(b.tensor("b", {cols}, second_t));
  if (is_binary_type(type) && type != OpType::BIAS_ADD && !constant)
    in.push_back(b.tensor("Y", {rows, cols}, second_t, l2));
  TensorId y = b.tensor("Z", {rows, cols}, out_t, lout);
  Op& op = b.op(type, in, y);
  op.attrs.approximate = approx;
  op.attrs.constant = constant;
  if (type == OpType::POW && !constant) op.attrs.constant = 2.0;  // POW needs its exponent
  b.g.outputs = {y};
  return {what, b.g};
}

// A CAST of a rows x cols X to Z with the given scales (f8 sides only), optionally with the amax
// of an f8 Z as a second output.
inline OpCase cast_graph(DType x_t, Scale sx, Layout lx, DType z_t, Scale sz, Layout lz, int64_t rows, int64_t cols,
                         bool amax, double std_dev, const std::string& what) {
  Builder b;
  TensorId x = b.tensor("X", {rows, cols}, x_t, lx);
  b.g.tensor(x).scale = sx;
  Init init;
  init.std = std_dev;
  b.g.tensor(x).init = init;
  TensorId z = b.tensor("Z", {rows, cols}, z_t, lz);
  b.g.tensor(z).scale = sz;
  b.op(OpType::CAST, {x}, z);
  b.g.outputs = {z};
  if (amax) {
    const TensorId m = b.tensor("Amax", {1}, DType::f32);
    b.g.ops.back().outputs.push_back(m);
    b.g.outputs.push_back(m);
  }
  return {what, b.g};
}

// CAST to and from f8: quantize (with the amax), dequantize, requantize, per-axis scales, layouts.
inline std::vector<OpCase> f8_cast_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  auto declared = [](const std::vector<DType>& ts, DType t) { return std::find(ts.begin(), ts.end(), t) != ts.end(); };
  if (!declared(def.inputs[0], DType::f8e4m3) && !declared(def.outputs, DType::f8e4m3)) return cases;
  const Layout row = Layout::rowmajor, col = Layout::colmajor;
  const Scale one;
  auto name = [](DType d) { return std::string(dtype_name(d)); };
  for (DType x : {DType::f32, DType::bf16, DType::f16})
    for (DType z : {DType::f8e4m3, DType::f8e5m2}) {
      // Values up to about 4 x 50: beyond e4m3's 448 x scale some saturate.
      const double sz = z == DType::f8e4m3 ? 0.25 : 0.001;
      cases.push_back(cast_graph(x, one, row, z, tensor_scale(sz), row, 9, 6, true, 50, "f8: quantize " + name(x) + " -> " + name(z) + " with amax"));
    }
  for (DType x : {DType::f8e4m3, DType::f8e5m2})
    for (DType z : {DType::f32, DType::bf16, DType::f16})
      cases.push_back(cast_graph(x, tensor_scale(x == DType::f8e4m3 ? 0.125 : 4.0), row, z, one, row, 9, 6, false, 1,
                                 "f8: dequantize " + name(x) + " -> " + name(z)));
  cases.push_back(cast_graph(DType::f8e4m3, tensor_scale(0.5), row, DType::f8e5m2, tensor_scale(0.125), row, 9, 6, true, 1,
                             "f8: requantize f8e4m3 -> f8e5m2 with amax"));
  cases.push_back(cast_graph(DType::f32, one, row, DType::f8e4m3, per_axis(0, 9, 0.05), row, 9, 6, true, 10,
                             "f8: quantize with per-row scales"));
  cases.push_back(cast_graph(DType::f32, one, row, DType::f8e4m3, per_axis(1, 6, 0.05), col, 9, 6, true, 10,
                             "f8: quantize into colmajor with per-column scales"));
  cases.push_back(cast_graph(DType::f8e5m2, per_axis(1, 6, 0.5), col, DType::bf16, one, row, 9, 6, false, 1,
                             "f8: dequantize colmajor with per-column scales"));
  cases.push_back(cast_graph(DType::f32, one, row, DType::f8e4m3, tensor_scale(0.02), row, 300, 200, true, 3,
                             "f8: quantize 300x200 with amax"));
  return cases;
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
  // The constant operands: a scalar (binary ops), fractional and negative exponents (POW; a
  // negative base with a fractional one is NaN, in the kernel and the reference alike).
  if (takes_constant(t)) {
    const std::vector<double> ks = t == OpType::POW ? std::vector<double>{0.5, 3.0, -1.0} : std::vector<double>{-0.3, 7.0};
    for (double k : ks)
      for (DType x : {DType::f32, DType::f16})
        cases.push_back(elementwise_graph(t, x, x, x, row, row, row, 7, 5, GeluApprox::tanh,
                                          std::string(constant_key(t)) + " " + std::to_string(k) + ", " + name(x), k));
    cases.push_back(elementwise_graph(t, DType::bf16, DType::bf16, DType::f32, row, row, row, 300, 200, GeluApprox::tanh,
                                      "300x200 with " + std::string(constant_key(t)) + " 0.1", 0.1));
  }
  if (t == OpType::CAST)
    for (OpCase& c : f8_cast_cases(def)) cases.push_back(std::move(c));
  return cases;
}

// A FUSED_ELEMENTWISE case: the chain `build` writes, grouped into one op by the
// group_elementwise pass (empty graph where it did not become exactly one group).
template <class F>
OpCase group_graph(const std::string& what, F&& build) {
  Builder b;
  build(b);
  PipelineOptions opts;
  opts.passes = {"group_elementwise"};
  std::ostringstream sink;
  if (!run_pipeline(b.g, opts, sink).ok() || b.g.ops.size() != 1) b.g.ops.clear();
  return {what, b.g};
}

// Groups of every step type, input dtypes and several outputs, at sizes that take the vector path,
// ragged tails (rows of 1001: no 4-element chunk lines up with a row), bias inputs read at the
// column, more inputs than the kernel keeps in registers at once, and a tiny one.
inline std::vector<OpCase> group_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  auto name = [](DType d) { return std::string(dtype_name(d)); };
  for (int64_t cols : {int64_t(4096), int64_t(1001)})
    for (DType dt : def.outputs)
      cases.push_back(group_graph("add, silu, bias, gelu erf; two outputs, 33x" + std::to_string(cols) + " " + name(dt),
                                  [&](Builder& b) {
        const int64_t r = 33;
        auto x = b.tensor("x", {r, cols}, dt), y = b.tensor("y", {r, cols}, DType::f16);
        auto bias = b.tensor("b", {cols}, DType::f32);
        auto t0 = b.tensor("t0", {r, cols}, DType::f32), t1 = b.tensor("t1", {r, cols}, dt);
        auto t2 = b.tensor("t2", {r, cols}, DType::bf16), out = b.tensor("out", {r, cols}, dt);
        b.op(OpType::ADD, {x, y}, t0);
        b.op(OpType::SILU, {t0}, t1);
        b.op(OpType::BIAS_ADD, {t1, bias}, t2);
        b.op(OpType::GELU, {t2}, out).attrs.approximate = GeluApprox::none;
        b.g.outputs = {out, t1};
      }));
  for (DType dt : def.outputs)
    cases.push_back(group_graph("silu(gate) * up, 64x352 " + name(dt), [&](Builder& b) {
      auto gate = b.tensor("gate", {64, 352}, dt), up = b.tensor("up", {64, 352}, dt);
      auto s = b.tensor("s", {64, 352}, dt), h = b.tensor("h", {64, 352}, dt);
      b.op(OpType::SILU, {gate}, s);
      b.op(OpType::MUL, {s, up}, h);
      b.g.outputs = {h};
    }));
  for (DType in_t : def.inputs.empty() ? std::vector<DType>{} : def.inputs[0])
    cases.push_back(group_graph("mul, relu, cast, gelu tanh from " + name(in_t) + ", 40x96", [&](Builder& b) {
      auto x = b.tensor("x", {40, 96}, in_t), y = b.tensor("y", {40, 96}, DType::bf16);
      auto m = b.tensor("m", {40, 96}, DType::f32), r = b.tensor("r", {40, 96}, DType::f32);
      auto c = b.tensor("c", {40, 96}, DType::f16), out = b.tensor("out", {40, 96}, DType::f32);
      b.op(OpType::MUL, {x, y}, m);
      b.op(OpType::RELU, {m}, r);
      b.op(OpType::CAST, {r}, c);
      b.op(OpType::GELU, {c}, out).attrs.approximate = GeluApprox::tanh;
      b.g.outputs = {out};
    }));
  for (DType dt : def.outputs)
    cases.push_back(group_graph("sub, div, sigmoid, tanh, erf, pow, scalars, 33x1001 " + name(dt), [&](Builder& b) {
      const std::vector<int64_t> s = {33, 1001};
      auto x = b.tensor("x", s, dt), y = b.tensor("y", s, DType::f32), d = b.tensor("d", s, DType::f16);
      std::vector<TensorId> t;
      for (int i = 0; i < 8; ++i) t.push_back(b.tensor(std::string{'t', char('0' + i)}, s, i % 3 ? dt : DType::f32));
      b.op(OpType::SUB, {x, y}, t[0]);
      b.op(OpType::DIV, {t[0], d}, t[1]);  // d is an input: exact, so the quotient is bounded
      b.op(OpType::SIGMOID, {t[1]}, t[2]);
      b.op(OpType::TANH, {t[1]}, t[3]);
      b.op(OpType::ERF, {t[3]}, t[4]);
      b.op(OpType::POW, {t[4]}, t[5]).attrs.constant = 3.0;
      b.op(OpType::DIV, {t[5]}, t[6]).attrs.constant = 0.1;
      b.op(OpType::SUB, {t[6]}, t[7]).attrs.constant = -2.5;
      b.g.outputs = {t[7], t[2]};
    }));
  cases.push_back(group_graph("seven inputs summed and multiplied, 24x40", [&](Builder& b) {
    std::vector<TensorId> in;
    for (int i = 0; i < 7; ++i) in.push_back(b.tensor(std::string{'i', char('0' + i)}, {24, 40}, i % 2 ? DType::f16 : DType::f32));
    TensorId acc = in[0];
    for (int i = 1; i < 7; ++i) {
      const TensorId t = b.tensor(std::string{'s', char('0' + i)}, {24, 40}, i % 2 ? DType::f16 : DType::f32);
      b.op(i % 3 ? OpType::ADD : OpType::MUL, {acc, in[size_t(i)]}, t);
      acc = t;
    }
    b.g.outputs = {acc};
  }));
  cases.push_back(group_graph("a DAG: x read by two steps, both results out, 3x5", [&](Builder& b) {
    auto x = b.tensor("x", {3, 5}, DType::bf16), bias = b.tensor("b", {5}, DType::f16);
    auto t = b.tensor("t", {3, 5}, DType::f32), s = b.tensor("s", {3, 5}, DType::bf16);
    auto out = b.tensor("out", {3, 5}, DType::f16);
    b.op(OpType::BIAS_ADD, {x, bias}, t);
    b.op(OpType::SILU, {x}, s);
    b.op(OpType::MUL, {t, s}, out);
    b.g.outputs = {out, t};
  }));
  return cases;
}

// A collective over one rank (the identity; the reference takes it so), in each dtype, along the
// first axis and along a later one (NCCL's strided path); the sharded-run tests
// (test_tensor_parallel.cpp, gpu/test_tensor_parallel_gpu.cpp) run them over more ranks.
inline std::vector<OpCase> collective_cases(const KernelDef& def) {
  std::vector<OpCase> cases;
  for (DType dt : def.outputs)
    for (int axis : {0, 1}) {
      if (def.op == OpType::ALL_REDUCE && axis == 1) continue;
      Builder b;
      const TensorId x = b.tensor("X", {48, 40}, dt), y = b.tensor("Y", {48, 40}, dt);
      Op& op = b.op(def.op, {x}, y);
      op.attrs.ranks = 1;
      op.attrs.axis = axis;
      b.g.outputs = {y};
      cases.push_back({std::string(dtype_name(dt)) + " over one rank" + (def.op == OpType::ALL_REDUCE ? "" : ", axis " + std::to_string(axis)),
                       std::move(b.g)});
    }
  return cases;
}

}  // namespace detail

// Values that reach the edges of each op: zeros of both signs, tiny and huge magnitudes, the
// saturation of SIGMOID/TANH/ERF (|x| of 10 to 90), the exp overflow of SIGMOID (x < -88.7).
inline const std::vector<double> kEdges = {0.0,  -0.0,  1e-3,  -1e-3, 1e-7, -3e-6, 0.5,  -0.5, 1.0,  -1.0,
                                    2.5,  -2.5,  4.0,   -4.0,  9.5,  -9.5,  10.0, -10.0, 30.0, -30.0,
                                    88.0, -88.0, 89.5,  -89.5, 100.0, -100.0, 0.1, -0.1, 1.5,  -1.5};
// Divisors: near 0 (f32 subnormal 3e-39 included), exactly 0, and ordinary ones.
inline const std::vector<double> kDivisors = {1e-30, -1e-20, 1e-7,  -1e-7, 3e-39, 0.0,  -0.0, 2.0,  -3.0, 0.25,
                                       1e-3,  -1e-3,  7.0,   -7.0,  0.1,   1e30, -1e30, 1.0,  -1.0, 0.5,
                                       1e-38, 5.0,    -5.0,  9.0,   -9.0,  1.5,  -1.5, 3.0,  0.3,  -0.3};

inline Builder edge_unary_graph(OpType t, DType dt, std::optional<double> constant = std::nullopt) {
  Builder b;
  const TensorId x = b.tensor("X", {int64_t(kEdges.size())}, dt);
  Init in;
  in.kind = InitKind::values;
  in.values = kEdges;
  b.g.tensor(x).init = in;
  const TensorId z = b.tensor("Z", {int64_t(kEdges.size())}, dt);
  b.op(t, {x}, z).attrs.constant = constant;
  b.g.outputs = {z};
  return b;
}

// X (the edge values) and Y (the divisors), of dtype dt.
inline std::pair<TensorId, TensorId> edge_inputs(Builder& b, DType dt) {
  const int64_t n = int64_t(kEdges.size());
  const TensorId x = b.tensor("X", {n}, dt), y = b.tensor("Y", {n}, dt);
  Init in;
  in.kind = InitKind::values;
  in.values = kEdges;
  b.g.tensor(x).init = in;
  in.values = kDivisors;
  b.g.tensor(y).init = in;
  return {x, y};
}

inline Builder edge_divide_graph(DType dt) {
  Builder b;
  const auto [x, y] = edge_inputs(b, dt);
  const TensorId z = b.tensor("Z", {int64_t(kEdges.size())}, dt);
  b.op(OpType::DIV, {x, y}, z);
  b.g.outputs = {z};
  return b;
}

// Normal(0, 2) inputs, 4096 of them: where a wrong formula shows.
inline Builder random_graph(OpType t, DType dt, std::optional<double> constant = std::nullopt, bool two = false) {
  Builder b;
  const TensorId x = b.tensor("X", {64, 64}, dt);
  Init in;
  in.std = 2.0;
  b.g.tensor(x).init = in;
  std::vector<TensorId> ins = {x};
  if (two) {
    const TensorId y = b.tensor("Y", {64, 64}, dt);
    Init u;
    u.kind = InitKind::uniform, u.low = 0.5, u.high = 2.0;
    b.g.tensor(y).init = u;
    ins.push_back(y);
  }
  const TensorId z = b.tensor("Z", {64, 64}, dt);
  b.op(t, ins, z).attrs.constant = constant;
  b.g.outputs = {z};
  return b;
}

// The new elementwise ops (and scalar operands) on edge values, every input exact: single ops in
// f32, f16, bf16, and a group of them (the group kernel: on CUDA the generated one, or the
// interpreter with GEXEC_FAULT=compile).
inline std::vector<OpCase> edge_value_cases() {
  std::vector<OpCase> cases;
  for (DType dt : {DType::f32, DType::f16, DType::bf16}) {
    const std::string d(dtype_name(dt));
    cases.push_back({"SIGMOID " + d, edge_unary_graph(OpType::SIGMOID, dt).g});
    cases.push_back({"TANH " + d, edge_unary_graph(OpType::TANH, dt).g});
    cases.push_back({"ERF " + d, edge_unary_graph(OpType::ERF, dt).g});
    cases.push_back({"DIV by values near and at 0 " + d, edge_divide_graph(dt).g});
    cases.push_back({"DIV by scalar 0.1 " + d, edge_unary_graph(OpType::DIV, dt, 0.1).g});
    cases.push_back({"DIV by scalar -3e-39 " + d, edge_unary_graph(OpType::DIV, dt, -3e-39).g});
    cases.push_back({"SUB scalar 2.5 " + d, edge_unary_graph(OpType::SUB, dt, 2.5).g});
    cases.push_back({"ADD scalar -1e-3 " + d, edge_unary_graph(OpType::ADD, dt, -1e-3).g});
    cases.push_back({"MUL scalar 7 " + d, edge_unary_graph(OpType::MUL, dt, 7.0).g});
    for (double p : {2.0, 3.0, 0.5, 1.5, -1.0, -2.0, 0.0, 1.0 / 3.0})
      cases.push_back({"POW " + std::to_string(p) + " " + d, edge_unary_graph(OpType::POW, dt, p).g});
    cases.push_back(detail::group_graph("a group of SUB, DIV, SIGMOID, TANH, ERF, POW on edge values " + d, [&](Builder& b) {
      const int64_t n = int64_t(kEdges.size());
      const auto [x, y] = edge_inputs(b, dt);
      std::vector<TensorId> t;
      for (int i = 0; i < 7; ++i) t.push_back(b.tensor(std::string{'t', char('0' + i)}, {n}, dt));
      b.op(OpType::DIV, {x, y}, t[0]);
      b.op(OpType::SIGMOID, {t[0]}, t[1]);
      b.op(OpType::SUB, {t[1], x}, t[2]);
      b.op(OpType::TANH, {t[2]}, t[3]);
      b.op(OpType::ERF, {t[2]}, t[4]);
      b.op(OpType::POW, {t[4]}, t[5]).attrs.constant = 2.0;
      b.op(OpType::DIV, {t[5]}, t[6]).attrs.constant = 3.0;
      b.g.outputs = {t[0], t[3], t[6]};
    }));
  }
  return cases;
}

// A wrong kernel: the device runs `wrong`, the reference computes `right` (the same tensors).
// `cuda_kernel`, where set, is the kernel the CUDA device runs both on: one whose declared
// arithmetic leaves the bound tight enough to see the error (the CPU backend's always is).
struct WrongCase {
  std::string what;
  Graph wrong, right;
  std::string cuda_kernel = {};
};

inline std::vector<WrongCase> wrong_kernel_cases() {
  std::vector<WrongCase> pairs;
  for (DType dt : {DType::f32, DType::bf16}) {
    const std::string d = " " + std::string(dtype_name(dt));
    pairs.push_back({"tanh computed as x" + d, random_graph(OpType::CAST, dt).g, random_graph(OpType::TANH, dt).g});
    pairs.push_back({"erf computed as tanh" + d, random_graph(OpType::TANH, dt).g, random_graph(OpType::ERF, dt).g});
    pairs.push_back({"sigmoid computed as silu" + d, random_graph(OpType::SILU, dt).g, random_graph(OpType::SIGMOID, dt).g});
    pairs.push_back({"DIV computed as MUL" + d, random_graph(OpType::MUL, dt, std::nullopt, true).g,
                     random_graph(OpType::DIV, dt, std::nullopt, true).g});
    pairs.push_back({"SUB computed as ADD" + d, random_graph(OpType::ADD, dt, std::nullopt, true).g,
                     random_graph(OpType::SUB, dt, std::nullopt, true).g});
    pairs.push_back({"POW 3 computed as POW 2" + d, random_graph(OpType::POW, dt, 2.0).g, random_graph(OpType::POW, dt, 3.0).g});
  }
  // Small errors, seen at f32's precision: 1e-3 and about 1% relative.
  pairs.push_back({"DIV by 3 computed as MUL by 0.333", random_graph(OpType::MUL, DType::f32, 0.333).g,
                   random_graph(OpType::DIV, DType::f32, 3.0).g});
  pairs.push_back({"POW 0.5 with the exponent 0.51", random_graph(OpType::POW, DType::f32, 0.51).g,
                   random_graph(OpType::POW, DType::f32, 0.5).g});
  // A product's erf GELU epilogue computed as the tanh form (at most about 5e-4 apart). f16 A and
  // B, exact in any product, so that the bound is f32's accumulation and not TF32's rounding of f32
  // operands (CUDA's default); C f32. On CUDA both run on the one-group GEMM, whose f32 epilogue
  // evaluates tanhf and erff: cuBLASLt's GELU epilogue declares its tanh approximate to 2^-10
  // (kCublasLtGeluTanhRel), a bound that holds the two forms' difference, so on it the check
  // cannot tell them apart.
  detail::GemmCase erf;
  erf.a = erf.b = DType::f16;
  erf.m = 64, erf.n = 64, erf.k = 16;
  erf.act = Act::gelu_erf;
  detail::GemmCase tanh_form = erf;
  tanh_form.act = Act::gelu;
  pairs.push_back({"GEMM_BIAS_ACT gelu_erf computed as gelu (tanh)", detail::gemm_graph(OpType::GEMM_BIAS_ACT, tanh_form, "tanh").graph,
                   detail::gemm_graph(OpType::GEMM_BIAS_ACT, erf, "erf").graph, "cuda.gemm_one_group"});
  return pairs;
}


// The cases a declaration allows; empty for an op type the harness does not know yet, which the
// tests report as a failure (every table entry must have a case).
// A case the declaration's own check refuses (on an sm_90 device, the default options) is not
// one of its cases: e.g. a colmajor f8 C for cuBLASLt's FP8 product, or an f16 cast for the f8 CAST.
inline std::vector<OpCase> cases_for(const KernelDef& def) {
  std::vector<OpCase> all;
  if (is_gemm(def.op)) all = detail::gemm_cases(def);
  if (is_group_step_type(def.op)) all = detail::elementwise_cases(def);  // every elementwise op alike
  if (def.op == OpType::FUSED_ELEMENTWISE) all = detail::group_cases(def);
  if (is_collective(def.op)) all = detail::collective_cases(def);
  if (def.op == OpType::GROUPED_GEMM)  // the shared cases (grouped_case.hpp) in the dtypes it declares
    for (const GroupedCase& c : grouped_cases())
      if (std::count(def.inputs[0].begin(), def.inputs[0].end(), c.in) &&
          std::count(def.inputs[1].begin(), def.inputs[1].end(), c.w_dtype.value_or(c.in)) &&
          std::count(def.outputs.begin(), def.outputs.end(), c.out))
        all.push_back({c.describe(), grouped_graph(c)});
  // A collective's cases are its cases in any build (one built without NCCL refuses them all).
  if (!def.check || is_collective(def.op)) return all;
  std::vector<OpCase> cases;
  const DeviceCaps caps;
  KernelOptions forced;  // as run_case(..., def.name) selects: what the kernel can run, not what it would win
  forced.forced["*"] = def.name;
  for (OpCase& c : all)
    if (def.check(c.graph, c.graph.ops[0], caps, forced).ok()) cases.push_back(std::move(c));
  return cases;
}

}  // namespace gexec::test
