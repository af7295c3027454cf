// The cuBLASLt GEMM kernel on the device against the CPU reference: dtypes, activations, biases,
// layouts, transposes, batches, alpha, sizes, and every heuristic candidate.
#include "catch.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../../src/backends/cuda/cublaslt_gemm.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "gexec/kernels/declared.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"

using namespace gexec;

namespace {

struct Case {
  OpType op = OpType::GEMM_BIAS_ACT;
  int64_t batch = 0;  // 0: a rank-2 product
  bool b_batched = true;
  int64_t m = 64, n = 96, k = 80;
  DType a = DType::f16, b = DType::f16, c = DType::f16;
  std::optional<DType> bias;  // GEMM_BIAS_ACT only
  bool bias_const = false, b_const = false;
  Act act = Act::none;
  bool trans_a = false, trans_b = false;
  Layout la = Layout::rowmajor, lb = Layout::rowmajor, lc = Layout::rowmajor;
  double alpha = 1.0;
  int candidate = -1;  // -1: the heuristic's first

  std::string describe() const {
    std::string s = std::string(op_type_name(op)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                    " k=" + std::to_string(k);
    if (batch) s += " batch=" + std::to_string(batch) + (b_batched ? " (B batched)" : " (B shared)");
    s += " A " + std::string(dtype_name(a)) + " " + std::string(layout_name(la)) + (trans_a ? " T" : "");
    s += ", B " + std::string(dtype_name(b)) + " " + std::string(layout_name(lb)) + (trans_b ? " T" : "") +
         (b_const ? " const" : "");
    s += ", C " + std::string(dtype_name(c)) + " " + std::string(layout_name(lc));
    if (bias) s += ", bias " + std::string(dtype_name(*bias)) + (bias_const ? " const" : "");
    s += ", act " + std::string(act_name(act)) + ", alpha " + std::to_string(alpha);
    if (candidate >= 0) s += ", candidate " + std::to_string(candidate);
    return s;
  }
};

Tensor make_tensor(std::string name, std::vector<int64_t> shape, DType t, Layout l, bool input, double std) {
  Tensor x;
  x.name = std::move(name);
  x.shape = std::move(shape);
  x.dtype = t;
  x.layout = l;
  if (input) {
    Init init;
    init.kind = InitKind::normal;
    init.std = std;
    x.init = init;
  }
  return x;
}

Graph build_graph(const Case& c) {
  Graph g;
  g.name = "cublaslt_test";
  std::vector<int64_t> sa = c.trans_a ? std::vector<int64_t>{c.k, c.m} : std::vector<int64_t>{c.m, c.k};
  std::vector<int64_t> sb = c.trans_b ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n};
  std::vector<int64_t> sc = {c.m, c.n};
  if (c.batch) {
    sa.insert(sa.begin(), c.batch);
    if (c.b_batched) sb.insert(sb.begin(), c.batch);
    sc.insert(sc.begin(), c.batch);
  }
  Op op;
  op.name = "gemm";
  op.type = c.op;
  op.inputs.push_back(g.add_tensor(make_tensor("A", sa, c.a, c.la, true, 0.5)));
  Tensor b = make_tensor("B", sb, c.b, c.lb, true, 0.5);
  b.constant = c.b_const;
  op.inputs.push_back(g.add_tensor(b));
  if (c.bias) {
    Tensor bias = make_tensor("Bias", {c.n}, *c.bias, Layout::rowmajor, true, 0.5);
    bias.constant = c.bias_const;
    op.inputs.push_back(g.add_tensor(bias));
  }
  op.outputs.push_back(g.add_tensor(make_tensor("C", sc, c.c, c.lc, false, 0)));
  op.attrs.trans_a = c.trans_a;
  op.attrs.trans_b = c.trans_b;
  op.attrs.alpha = c.alpha;
  if (c.op == OpType::GEMM_BIAS_ACT) op.attrs.act = c.act;
  g.outputs = op.outputs;
  g.ops.push_back(op);
  return g;
}

// The bound follows what the kernel that ran declares (CublasLtGemm::precision()): TF32 products
// for f32 operands, and its unfused fallback's or GELU epilogue's roundings.
Tolerance tolerance_for(const Case& c) { return default_tolerance(c.c); }

struct Outcome {
  std::string error;  // empty when every check passed
  bool fused = false;
  std::string fallback_reason;
  int candidates = 0;
};

Outcome failed(std::string error) {
  Outcome o;
  o.error = std::move(error);
  return o;
}

// Downloads the inputs and C, runs the reference on those inputs, compares.
std::string check_output(Device& dev, const Graph& g, const std::vector<void*>& addr, const Case& c,
                         const Precision& prec, const std::string& when) {
  std::map<std::string, std::vector<uint8_t>> inputs;
  const Op& op = g.ops[0];
  for (TensorId t : op.inputs) {
    std::vector<uint8_t> bytes(size_t(g.tensor(t).bytes()));
    if (Status s = dev.download(bytes.data(), addr[size_t(t)], bytes.size()); !s) return s.error().message;
    inputs[g.tensor(t).name] = std::move(bytes);
  }
  const Tensor& ct = g.tensor(op.outputs[0]);
  std::vector<uint8_t> got(size_t(ct.bytes()));
  if (Status s = dev.download(got.data(), addr[size_t(op.outputs[0])], got.size()); !s) return s.error().message;
  auto ref = run_reference(g, inputs, {}, prec);
  if (!ref) return "reference: " + ref.error().message;
  const OutputCheck chk = compare_output(ct, got.data(), ref->at("C"), tolerance_for(c));
  if (chk.pass) return "";
  return when + ": " + std::to_string(chk.beyond) + " of " + std::to_string(chk.count) +
         " elements beyond tolerance; max_abs " + std::to_string(chk.max_abs) + " max_rel " +
         std::to_string(chk.max_rel) + "; worst element " + std::to_string(chk.worst) + " got " +
         std::to_string(chk.worst_got) + " ref " + std::to_string(chk.worst_ref);
}

Outcome run_case(Device& dev, const Case& c) {
  Outcome out;
  Graph g = build_graph(c);
  const auto problems = verify(g);
  if (!problems.empty()) {
    out.error = "bad test graph: " + problems[0];
    return out;
  }
  const Op& op = g.ops[0];
  const auto defs = cublaslt_kernel_defs();
  auto def = std::find_if(defs.begin(), defs.end(), [&](const KernelDef& d) { return d.op == op.type; });
  if (def == defs.end()) {
    out.error = "no cuBLASLt kernel declared for " + std::string(op_type_name(op.type));
    return out;
  }
  if (def->check) {
    const Verdict v = def->check(g, op, dev.caps(), KernelOptions{});
    if (!v.ok()) {
      out.error = "rejected: " + v.rejected;
      return out;
    }
  }

  // One buffer per tensor in one arena, 256-byte aligned as the planner gives them.
  std::vector<int64_t> offset;
  int64_t total = 0;
  for (const Tensor& t : g.tensors) {
    offset.push_back(total);
    total += (t.bytes() + 255) / 256 * 256;
  }
  auto arena = dev.allocate_arena(total);
  if (!arena) return failed(arena.error().message);
  std::vector<void*> addr;
  for (int64_t o : offset) addr.push_back(static_cast<char*>(*arena) + o);

  auto fail = [&](const Status& s) { out.error = s.error().message; return out; };
  for (TensorId t : op.inputs)
    if (Status s = dev.fill_input(g.tensor(t), addr[size_t(t)], 7); !s) return fail(s);
  const TensorId ct = op.outputs[0];
  const size_t c_bytes = size_t(g.tensor(ct).bytes());
  if (Status s = dev.poison(addr[size_t(ct)], c_bytes); !s) return fail(s);

  Binding bind;
  for (TensorId t : op.inputs) bind.inputs.push_back(addr[size_t(t)]);
  bind.outputs.push_back(addr[size_t(ct)]);
  auto kernel = dev.make_kernel(*def, g, op, bind, {});
  if (!kernel) return failed(kernel.error().message);
  if (Status s = (*kernel)->prepare(); !s) return fail(s);
  auto* gemm = dynamic_cast<cuda::CublasLtGemm*>(kernel->get());
  if (!gemm) return failed("make_kernel did not give the cuBLASLt kernel");
  out.fused = gemm->fused();
  out.fallback_reason = gemm->note();
  out.candidates = gemm->variant_count();
  if (c.candidate >= 0)
    if (Status s = gemm->select_variant(c.candidate); !s) return fail(s);

  if (Status s = (*kernel)->run(); !s) return fail(s);
  if (Status s = dev.synchronize(); !s) return fail(s);
  const bool large = c.m * c.n * c.k > 200'000'000;
  if (!large) {
    out.error = check_output(dev, g, addr, c, gemm->precision(), "first run");
    if (!out.error.empty()) return out;
  }

  // New values in every input that may change between runs: a second run must follow them
  // (what is converted in every run is converted again; constants keep their values).
  for (TensorId t : op.inputs)
    if (!g.tensor(t).constant)
      if (Status s = dev.fill_input(g.tensor(t), addr[size_t(t)], 8); !s) return fail(s);
  if (Status s = dev.poison(addr[size_t(ct)], c_bytes); !s) return fail(s);
  if (Status s = (*kernel)->run(); !s) return fail(s);
  if (Status s = dev.synchronize(); !s) return fail(s);
  out.error = check_output(dev, g, addr, c, gemm->precision(), "second run");
  return out;
}

std::unique_ptr<Device> open_device() {
  auto d = open_cuda_device(0);
  if (!d) FAIL(d.error().message);
  return std::move(*d);
}

void run_all(const std::vector<Case>& cases) {
  auto dev = open_device();
  for (const Case& c : cases) {
    INFO(c.describe());
    const Outcome o = run_case(*dev, c);
    INFO("fused " << o.fused << ", candidates " << o.candidates << ", fallback: " << o.fallback_reason);
    CHECK(o.error == "");
  }
}

const DType kDTypes[] = {DType::f16, DType::bf16, DType::f32};

// A product no dimension of which is a multiple of 16 bytes in f16: padding or the slow kernels.
Case misaligned() {
  Case c;
  c.m = 127;
  c.n = 65;
  c.k = 33;
  return c;
}
const Act kActs[] = {Act::none, Act::relu, Act::gelu};

}  // namespace

// Every input dtype with every output dtype, and every layout with every transpose, are cases
// of the backend-ops harness (tests/backend_ops.hpp, test_backend_ops.cpp); here the cases that
// need this harness: a second run on new values, candidates, fusion, sizes.
TEST_CASE("cublaslt: activations and bias dtypes, constant or not", "[gpu][cublaslt]") {
  std::vector<Case> cases;
  for (Act act : kActs)
    for (DType bt : kDTypes)
      for (int cst = 0; cst < 2; ++cst)
        for (DType outt : {DType::f16, DType::f32}) {
          Case c = misaligned();
          c.c = outt;
          c.bias = bt;
          c.bias_const = cst != 0;
          c.act = act;
          cases.push_back(c);
        }
  Case c;  // bf16 output with an f32 bias, and bf16 inputs
  c.a = c.b = c.c = DType::bf16;
  c.bias = DType::f32;
  c.bias_const = true;
  c.act = Act::gelu;
  cases.push_back(c);
  c.bias_const = false;
  cases.push_back(c);
  Case none;  // GEMM_BIAS_ACT without a bias
  none.act = Act::gelu;
  cases.push_back(none);
  run_all(cases);
}

TEST_CASE("cublaslt: every layout of A, B and C with every transpose", "[gpu][cublaslt]") {
  std::vector<Case> cases;
  for (Layout la : {Layout::rowmajor, Layout::colmajor})
    for (Layout lb : {Layout::rowmajor, Layout::colmajor})
      for (Layout lc : {Layout::rowmajor, Layout::colmajor})
        for (int ta = 0; ta < 2; ++ta)
          for (int tb = 0; tb < 2; ++tb) {
            Case c = misaligned();
            c.la = la;
            c.lb = lb;
            c.lc = lc;
            c.trans_a = ta != 0;
            c.trans_b = tb != 0;
            c.bias = DType::f32;
            c.bias_const = true;
            c.act = Act::relu;
            cases.push_back(c);
            Case mm = c;  // plain, and activation without bias (fused in either view)
            mm.op = OpType::MATMUL;
            mm.bias.reset();
            mm.act = Act::none;
            cases.push_back(mm);
            Case gelu = c;
            gelu.bias.reset();
            gelu.act = Act::gelu;
            cases.push_back(gelu);
          }
  run_all(cases);
}

TEST_CASE("cublaslt: batched products, B batched or shared", "[gpu][cublaslt]") {
  std::vector<Case> cases;
  for (int bb = 0; bb < 2; ++bb)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        Case c;
        c.batch = 3;
        c.b_batched = bb != 0;
        c.m = 33;
        c.n = 40;
        c.k = 17;
        c.trans_a = ta != 0;
        c.trans_b = tb != 0;
        c.bias = DType::f16;
        c.act = Act::gelu;
        cases.push_back(c);
        if (!c.b_batched) {  // a shared colmajor B (rank 2 may be colmajor)
          Case col = c;
          col.lb = Layout::colmajor;
          cases.push_back(col);
        }
      }
  Case c;
  c.batch = 4;
  c.a = c.b = DType::bf16;
  c.c = DType::f32;
  c.bias = DType::bf16;
  c.act = Act::relu;
  cases.push_back(c);
  c.op = OpType::MATMUL;
  c.bias.reset();
  c.act = Act::none;
  c.b_batched = false;
  c.a = c.b = DType::f32;
  c.c = DType::f16;
  cases.push_back(c);
  run_all(cases);
}

TEST_CASE("cublaslt: alpha", "[gpu][cublaslt]") {
  std::vector<Case> cases;
  Case c;
  c.op = OpType::MATMUL;
  c.alpha = 0.5;
  cases.push_back(c);
  c.op = OpType::GEMM_BIAS_ACT;
  c.alpha = -2.0;
  c.a = c.b = c.c = DType::bf16;
  c.bias = DType::f32;
  c.act = Act::relu;
  cases.push_back(c);
  c.a = c.b = c.c = DType::f32;
  c.alpha = 0.25;
  c.act = Act::gelu;
  cases.push_back(c);
  c.lc = Layout::colmajor;  // alpha on the unfused path too
  cases.push_back(c);
  run_all(cases);
}

TEST_CASE("cublaslt: A and B of different dtypes", "[gpu][cublaslt]") {
  std::vector<Case> cases;
  Case c = misaligned();
  c.a = DType::f16;
  c.b = DType::f32;
  c.bias = DType::f32;
  c.act = Act::relu;
  cases.push_back(c);
  c.b_const = true;
  c.a = DType::bf16;
  c.b = DType::f16;
  c.c = DType::bf16;
  cases.push_back(c);
  c.b_const = false;
  c.a = DType::f32;
  c.b = DType::bf16;
  c.c = DType::f32;
  c.trans_b = true;
  cases.push_back(c);
  run_all(cases);
}

TEST_CASE("cublaslt: sizes from 1x1x1 to 2048^3", "[gpu][cublaslt]") {
  std::vector<Case> cases;
  for (DType t : kDTypes) {
    Case one;
    one.m = one.n = one.k = 1;
    one.a = one.b = one.c = t;
    one.bias = t;
    one.act = Act::relu;
    cases.push_back(one);
  }
  Case odd = misaligned();
  odd.bias = DType::f16;
  odd.act = Act::gelu;
  cases.push_back(odd);
  Case big;
  big.m = big.n = big.k = 1000;
  big.bias = DType::f32;
  big.bias_const = true;
  big.act = Act::gelu;
  cases.push_back(big);
  big.op = OpType::MATMUL;
  big.bias.reset();
  big.act = Act::none;
  big.a = big.b = big.c = DType::bf16;
  cases.push_back(big);
  Case large;  // the example graph's form, large
  large.m = large.n = large.k = 2048;
  large.bias = DType::f32;
  large.bias_const = true;
  large.act = Act::relu;
  cases.push_back(large);
  run_all(cases);
}

TEST_CASE("cublaslt: the example graph fuses bias and relu into the epilogue", "[gpu][cublaslt]") {
  auto dev = open_device();
  Case c;  // graph-format.md's example: f16, f32 constant bias, relu
  c.bias = DType::f32;
  c.bias_const = true;
  c.act = Act::relu;
  Outcome o = run_case(*dev, c);
  CHECK(o.error == "");
  CHECK(o.fused);
  CHECK(o.fallback_reason == "");
  CHECK(o.candidates >= 1);

  c.lc = Layout::colmajor;  // the bias on D's columns: not fused, and still right
  o = run_case(*dev, c);
  CHECK(o.error == "");
  CHECK_FALSE(o.fused);
  CHECK(o.fallback_reason != "");
}

TEST_CASE("cublaslt: every heuristic candidate gives the right answer", "[gpu][cublaslt]") {
  auto dev = open_device();
  for (int64_t size : {127, 512}) {
    Case c;
    c.m = size;
    c.n = size == 127 ? 65 : size;
    c.k = size == 127 ? 33 : size;
    c.bias = DType::f16;
    c.act = Act::gelu;
    const Outcome first = run_case(*dev, c);
    REQUIRE(first.error == "");
    REQUIRE(first.candidates >= 1);
    for (int i = 0; i < first.candidates; ++i) {
      c.candidate = i;
      INFO(c.describe());
      const Outcome o = run_case(*dev, c);
      CHECK(o.error == "");
    }
  }
}
