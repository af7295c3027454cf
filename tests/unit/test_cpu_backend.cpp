// Every op of the CPU backend, in every dtype, layout and transpose, against the reference.
#if GEXEC_HAVE_CPU

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "graph_builder.hpp"
#include "gexec/backends/cpu_device.hpp"
#include "gexec/kernels/declared.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"

using namespace gexec;

namespace {

constexpr DType kDTypes[] = {DType::f16, DType::bf16, DType::f32};

using test::Builder;

const KernelDef& cpu_def(OpType type) {
  static const std::vector<KernelDef> defs = cpu_kernel_defs();
  for (const KernelDef& d : defs)
    if (d.op == type) return d;
  FAIL("no CPU kernel for " << op_type_name(type));
  return defs.front();
}

// Runs the graph on the CPU device (each op's own kernel, twice, as repeated runs would) and
// returns each output's check against the reference of the same graph from the same inputs.
// `reference_graph`, when given, is what the reference runs instead (to see a check fail).
std::map<std::string, OutputCheck> run_and_check(const Graph& g, const Graph* reference_graph = nullptr) {
  auto dev = open_cpu_device();
  std::vector<int64_t> offset(g.tensors.size());
  int64_t bytes = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    offset[t] = bytes;
    bytes += (g.tensors[t].bytes() + 255) / 256 * 256;
  }
  auto arena = dev->allocate_arena(bytes);
  REQUIRE(arena.ok());
  auto at = [&](TensorId t) { return static_cast<uint8_t*>(*arena) + offset[static_cast<size_t>(t)]; };

  std::vector<bool> written(g.tensors.size(), false);
  for (const Op& op : g.ops) written[static_cast<size_t>(op.outputs[0])] = true;
  const uint64_t seed = 1234;
  std::map<std::string, std::vector<uint8_t>> inputs;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& tensor = g.tensors[t];
    if (written[t]) {
      REQUIRE(dev->poison(at(TensorId(t)), static_cast<size_t>(tensor.bytes())).ok());
      continue;
    }
    REQUIRE(dev->fill_input(tensor, at(TensorId(t)), seed).ok());
    std::vector<uint8_t> seen(static_cast<size_t>(tensor.bytes()));
    REQUIRE(dev->download(seen.data(), at(TensorId(t)), seen.size()).ok());
    CHECK(seen == generate_input(tensor, seed));
    inputs[tensor.name] = std::move(seen);
  }

  std::vector<std::unique_ptr<Kernel>> kernels;
  for (const Op& op : g.ops) {
    const KernelDef& def = cpu_def(op.type);
    if (def.check) {
      Verdict v = def.check(g, op, dev->caps());
      INFO(v.rejected);
      REQUIRE(v.ok());
    }
    Binding b;
    for (TensorId t : op.inputs) b.inputs.push_back(at(t));
    b.outputs.push_back(at(op.outputs[0]));
    auto k = dev->make_kernel(def, g, op, b);
    REQUIRE(k.ok());
    REQUIRE((*k)->prepare().ok());
    kernels.push_back(std::move(k.value()));
  }
  for (int run = 0; run < 2; ++run)
    for (auto& k : kernels) REQUIRE(k->run().ok());
  REQUIRE(dev->synchronize().ok());

  auto ref = run_reference(reference_graph ? *reference_graph : g, inputs);
  REQUIRE(ref.ok());
  std::map<std::string, OutputCheck> checks;
  for (TensorId t : g.outputs) {
    const Tensor& tensor = g.tensor(t);
    std::vector<uint8_t> got(static_cast<size_t>(tensor.bytes()));
    REQUIRE(dev->download(got.data(), at(t), got.size()).ok());
    checks[tensor.name] = compare_output(tensor, got.data(), ref->at(tensor.name), default_tolerance(tensor.dtype));
  }
  return checks;
}

void require_pass(const Graph& g) {
  for (const auto& [name, c] : run_and_check(g)) {
    INFO(name << " " << dtype_name(c.dtype) << ": beyond " << c.beyond << " of " << c.count << ", worst " << c.worst
              << " got " << c.worst_got << " ref " << c.worst_ref << ", max_abs " << c.max_abs);
    CHECK(c.pass);
    CHECK(c.count > 0);
  }
}

}  // namespace

TEST_CASE("cpu: the device", "[cpu]") {
  auto dev = open_cpu_device();
  CHECK(dev->backend() == Backend::cpu);
  CHECK(dev->caps().name.find("OpenBLAS") != std::string::npos);
  CHECK(dev->caps().cc == 0);
  CHECK(dev->caps().detected);
  auto a = dev->allocate_arena(1000);
  REQUIRE(a.ok());
  CHECK(reinterpret_cast<uintptr_t>(*a) % 256 == 0);
  REQUIRE(dev->poison(*a, 8).ok());
  CHECK(std::isnan(load_as_float(*a, DType::f16, 0)));
  CHECK(std::isnan(load_as_float(*a, DType::bf16, 1)));
  CHECK(std::isnan(load_as_float(*a, DType::f32, 1)));
  auto huge = dev->allocate_arena(int64_t(1) << 62);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().code == Exit::runtime);

  Builder b;
  TensorId x = b.tensor("X", {4}), y = b.tensor("Y", {4});
  b.op(OpType::RELU, {x}, y);
  Binding bind{{*a}, {*a}};
  CHECK_FALSE(dev->make_kernel(cpu_def(OpType::GELU), b.g, b.g.ops[0], bind).ok());  // wrong op type
  CHECK(dev->make_kernel(cpu_def(OpType::RELU), b.g, b.g.ops[0], bind).ok());
  CHECK(cpu_kernel_defs().size() == 10);
}

TEST_CASE("cpu: GEMM_BIAS_ACT in every dtype and activation", "[cpu]") {
  for (DType ta : kDTypes)
    for (DType tb : kDTypes)
      for (DType tc : kDTypes)
        for (Act act : {Act::none, Act::relu, Act::gelu}) {
          Builder b;
          TensorId a = b.tensor("A", {37, 45}, ta), bb = b.tensor("B", {45, 29}, tb);
          TensorId bias = b.tensor("Bias", {29}, tb == DType::f32 ? DType::f16 : DType::f32);
          b.g.tensor(bias).constant = true;
          TensorId c = b.tensor("C", {37, 29}, tc);
          b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias}, c).attrs.act = act;
          b.g.outputs = {c};
          INFO(dtype_name(ta) << " x " << dtype_name(tb) << " -> " << dtype_name(tc) << " act " << act_name(act));
          require_pass(b.g);
        }
}

TEST_CASE("cpu: products with every transpose and layout, batched, alpha", "[cpu]") {
  for (int mask = 0; mask < 32; ++mask) {
    const bool ta = mask & 1, tb = mask & 2;
    const Layout la = mask & 4 ? Layout::colmajor : Layout::rowmajor;
    const Layout lb = mask & 8 ? Layout::colmajor : Layout::rowmajor;
    const Layout lc = mask & 16 ? Layout::colmajor : Layout::rowmajor;
    Builder b;
    const int64_t m = 33, n = 18, k = 27;
    TensorId a = b.tensor("A", ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, DType::f16, la);
    TensorId bb = b.tensor("B", tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, DType::bf16, lb);
    TensorId bias = b.tensor("Bias", {n}, DType::f32);
    TensorId c = b.tensor("C", {m, n}, mask % 3 == 0 ? DType::f32 : DType::f16, lc);
    Op& op = b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias}, c);
    op.attrs.trans_a = ta, op.attrs.trans_b = tb, op.attrs.alpha = 0.75, op.attrs.act = Act::relu;
    b.g.outputs = {c};
    INFO("mask " << mask);
    require_pass(b.g);
  }
  for (bool shared : {false, true})
    for (bool tb : {false, true}) {
      Builder b;
      TensorId a = b.tensor("A", {3, 21, 16}, DType::bf16);
      TensorId bb = shared ? b.tensor("B", tb ? std::vector<int64_t>{24, 16} : std::vector<int64_t>{16, 24}, DType::f32,
                                      tb ? Layout::colmajor : Layout::rowmajor)
                           : b.tensor("B", tb ? std::vector<int64_t>{3, 24, 16} : std::vector<int64_t>{3, 16, 24});
      TensorId c = b.tensor("C", {3, 21, 24}, DType::bf16);
      Op& op = b.op(OpType::MATMUL, {a, bb}, c);
      op.attrs.trans_b = tb, op.attrs.alpha = -1.5;
      b.g.outputs = {c};
      INFO("shared " << shared << " trans_b " << tb);
      require_pass(b.g);
    }
}

TEST_CASE("cpu: MATMUL in every dtype, and a product large enough for threads", "[cpu]") {
  for (DType ta : kDTypes)
    for (DType tc : kDTypes) {
      Builder b;
      TensorId a = b.tensor("A", {40, 50}, ta), bb = b.tensor("B", {50, 30}, ta), c = b.tensor("C", {40, 30}, tc);
      b.op(OpType::MATMUL, {a, bb}, c);
      b.g.outputs = {c};
      require_pass(b.g);
    }
  Builder b;
  TensorId a = b.tensor("A", {256, 320}), bb = b.tensor("B", {320, 288}), bias = b.tensor("Bias", {288});
  TensorId c = b.tensor("C", {256, 288});
  b.op(OpType::GEMM_BIAS_ACT, {a, bb, bias}, c).attrs.act = Act::gelu;
  b.g.outputs = {c};
  require_pass(b.g);
}

TEST_CASE("cpu: elementwise ops in every dtype pair and mixed layouts, threaded sizes", "[cpu]") {
  const OpType types[] = {OpType::BIAS_ADD, OpType::ADD, OpType::RELU, OpType::GELU, OpType::GELU, OpType::CAST};
  for (size_t ti = 0; ti < std::size(types); ++ti)
    for (DType tin : kDTypes)
      for (DType tout : kDTypes)
        for (bool big : {false, true}) {
          const OpType type = types[ti];
          Builder b;
          const int64_t rows = big ? 300 : 7, cols = big ? 200 : 5;  // 60000 elements: several threads
          TensorId x = b.tensor("X", {rows, cols}, tin, big ? Layout::colmajor : Layout::rowmajor);
          std::vector<TensorId> in = {x};
          if (type == OpType::BIAS_ADD) in.push_back(b.tensor("b", {cols}, tout));
          if (type == OpType::ADD) in.push_back(b.tensor("Y", {rows, cols}, tout, big ? Layout::rowmajor : Layout::colmajor));
          TensorId y = b.tensor("Z", {rows, cols}, tout, big ? Layout::rowmajor : Layout::colmajor);
          Op& op = b.op(type, in, y);
          if (ti == 4) op.attrs.approximate = GeluApprox::none;
          b.g.outputs = {y};
          INFO(op_type_name(type) << " " << dtype_name(tin) << " -> " << dtype_name(tout) << (big ? " big" : ""));
          require_pass(b.g);
        }
}

TEST_CASE("cpu: an unfused chain with f16 intermediates, and a check that can fail", "[cpu]") {
  Builder b;
  TensorId a = b.tensor("A", {2, 24, 40}, DType::f16), bb = b.tensor("B", {40, 32}, DType::f16);
  TensorId ab = b.tensor("AB", {2, 24, 32}, DType::f16), bias = b.tensor("Bias", {32}, DType::f32);
  TensorId abb = b.tensor("ABb", {2, 24, 32}, DType::f16), out = b.tensor("Out", {2, 24, 32}, DType::bf16);
  TensorId out32 = b.tensor("Out32", {2, 24, 32}, DType::f32);
  b.op(OpType::MATMUL, {a, bb}, ab);
  b.op(OpType::BIAS_ADD, {ab, bias}, abb);
  b.op(OpType::GELU, {abb}, out).attrs.approximate = GeluApprox::none;
  b.op(OpType::CAST, {out}, out32);
  b.g.outputs = {out, out32};
  require_pass(b.g);

  // The same device results against the reference of a product scaled by 1.25: most elements
  // differ by far more than the tolerance.
  Graph other = b.g;
  other.ops[0].attrs.alpha = 1.25;
  auto checks = run_and_check(b.g, &other);
  CHECK_FALSE(checks.at("Out").pass);
  CHECK(checks.at("Out").beyond > 100);
}

#else

#include "skip.hpp"

GEXEC_SKIPPED_TEST("cpu: every op of the CPU backend against the reference", "[cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU
