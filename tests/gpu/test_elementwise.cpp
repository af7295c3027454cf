// GPU tests of the CUDA elementwise kernels, the conversion and bias+activation launchers, and the
// device-side drawing of inputs: each against the CPU reference or the host generator.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../../src/backends/cuda/elementwise.hpp"
#include "../unit/graph_builder.hpp"
#include "catch.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "gexec/kernels/table.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"

using namespace gexec;

namespace {

constexpr int64_t kArenaBytes = int64_t(64) << 20;
constexpr DType kTypes[] = {DType::f16, DType::bf16, DType::f32};

// One device and one arena for every test; each test lays its buffers out from the start.
struct Gpu {
  std::unique_ptr<Device> dev;
  char* arena = nullptr;
  std::string error;
};

Gpu& gpu() {
  static Gpu g = [] {
    Gpu r;
    auto d = open_cuda_device(0);
    if (!d) {
      r.error = d.error().message;
      return r;
    }
    r.dev = std::move(*d);
    auto a = r.dev->allocate_arena(kArenaBytes);
    if (!a) r.error = a.error().message;
    else r.arena = static_cast<char*>(*a);
    return r;
  }();
  return g;
}

#define REQUIRE_OK(expr)                                                  \
  do {                                                                    \
    auto&& require_ok_r_ = (expr);                                        \
    INFO((require_ok_r_.ok() ? std::string() : require_ok_r_.error().message)); \
    REQUIRE(require_ok_r_.ok());                                          \
  } while (0)

Device& device() {
  Gpu& g = gpu();
  INFO(g.error);
  REQUIRE(g.arena != nullptr);
  return *g.dev;
}

// Lays buffers out in the arena, each 256-byte aligned, or one element past that when misaligned
// (which keeps the kernels off their 16-byte vector path).
struct Layouter {
  int64_t used = 0;
  bool misalign = false;
  char* place(const Tensor& t) {
    const int64_t start = used + (misalign ? dtype_size(t.dtype) : 0);
    used += (t.bytes() + 16 + 255) / 256 * 256;
    REQUIRE(used <= kArenaBytes);
    return gpu().arena + start;
  }
};

Tensor make_tensor(const std::string& name, std::vector<int64_t> shape, DType dt, Layout l = Layout::rowmajor) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dt;
  t.layout = l;
  return t;
}

Init uniform_init(double low, double high) {
  Init i;
  i.kind = InitKind::uniform;
  i.low = low;
  i.high = high;
  return i;
}

std::vector<uint8_t> download(const Tensor& t, const void* p) {
  std::vector<uint8_t> bytes(static_cast<size_t>(t.bytes()));
  REQUIRE_OK(device().download(bytes.data(), p, bytes.size()));
  return bytes;
}

// The storage index of logical element (r, c) of t seen as [rows, cols], cols its last dimension.
int64_t storage(const Tensor& t, int64_t r, int64_t c) {
  const int64_t cols = t.shape.back(), rows = t.numel() / cols;
  return t.layout == Layout::colmajor ? c * rows + r : r * cols + c;
}

std::string describe(const Tensor& t) {
  return std::string(dtype_name(t.dtype)) + shape_str(t.shape) + (t.layout == Layout::colmajor ? "col" : "");
}

const KernelDef& kernel_def(const std::string& name) {
  const KernelDef* found = nullptr;
  for (const KernelDef& k : kernel_table())
    if (k.name == name) found = &k;
  INFO("kernel " << name);
  REQUIRE(found != nullptr);
  return *found;
}

std::string kernel_for(OpType t) {
  switch (t) {
    case OpType::BIAS_ADD: return "cuda.bias_add";
    case OpType::ADD: return "cuda.add";
    case OpType::RELU: return "cuda.relu";
    case OpType::GELU: return "cuda.gelu";
    case OpType::SILU: return "cuda.silu";
    default: return "cuda.cast";
  }
}

struct Case {
  OpType type = OpType::CAST;
  std::vector<int64_t> shape;  // of X and of the output
  std::vector<DType> in;       // X, then Y (ADD) or the bias (BIAS_ADD)
  DType out = DType::f32;
  std::vector<Layout> in_layout;  // per input; rowmajor where not given
  Layout out_layout = Layout::rowmajor;
  GeluApprox approx = GeluApprox::tanh;
  bool misalign = false;
  std::vector<double> x_values;  // X's values where given, else drawn uniformly from [-5, 5]
};

// Runs one op through Device::make_kernel and checks it against the reference; CAST and RELU,
// which involve a single rounding of an exact value, must also match the host bit for bit.
void run_case(const Case& c) {
  Device& dev = device();
  Graph g;
  g.name = "elementwise";
  g.seed = 7;
  auto in_layout = [&](size_t i) { return i < c.in_layout.size() ? c.in_layout[i] : Layout::rowmajor; };
  Tensor x = make_tensor("X", c.shape, c.in[0], in_layout(0));
  x.init = uniform_init(-5.0, 5.0);  // reaches GELU's tails and both signs
  if (!c.x_values.empty()) x.init->kind = InitKind::values, x.init->values = c.x_values;
  std::vector<TensorId> inputs = {g.add_tensor(x)};
  if (c.in.size() > 1) {
    const bool bias = c.type == OpType::BIAS_ADD;
    Tensor y = make_tensor(bias ? "b" : "Y", bias ? std::vector<int64_t>{c.shape.back()} : c.shape, c.in[1],
                           bias ? Layout::rowmajor : in_layout(1));
    y.init = uniform_init(-2.0, 2.0);
    inputs.push_back(g.add_tensor(y));
  }
  const TensorId z_id = g.add_tensor(make_tensor("Z", c.shape, c.out, c.out_layout));
  Op op;
  op.name = "op";
  op.type = c.type;
  op.inputs = inputs;
  op.outputs = {z_id};
  op.attrs.approximate = c.approx;
  g.ops = {op};
  g.outputs = {z_id};

  std::string what = std::string(op_type_name(c.type)) + (c.type == OpType::GELU ? std::string(" ") +
                     std::string(gelu_approx_name(c.approx)) : std::string()) + ":";
  for (TensorId id : inputs) what += " " + describe(g.tensor(id));
  what += " -> " + describe(g.tensor(z_id)) + (c.misalign ? " misaligned" : "");
  INFO(what);
  const std::vector<std::string> problems = verify(g);
  INFO((problems.empty() ? std::string() : problems[0]));
  REQUIRE(problems.empty());

  Layouter lay{0, c.misalign};
  Binding b;
  for (TensorId id : inputs) {
    b.inputs.push_back(lay.place(g.tensor(id)));
    REQUIRE_OK(dev.fill_input(g.tensor(id), b.inputs.back(), *g.seed));
  }
  const Tensor& z = g.tensor(z_id);
  b.outputs.push_back(lay.place(z));
  REQUIRE_OK(dev.poison(b.outputs[0], size_t(z.bytes())));

  auto kernel = dev.make_kernel(kernel_def(kernel_for(c.type)), g, g.ops[0], b, {});
  REQUIRE_OK(kernel);
  REQUIRE_OK((*kernel)->prepare());
  REQUIRE_OK((*kernel)->run());
  REQUIRE_OK(dev.synchronize());

  std::map<std::string, std::vector<uint8_t>> in_bytes;
  for (size_t i = 0; i < inputs.size(); ++i) in_bytes[g.tensor(inputs[i]).name] = download(g.tensor(inputs[i]), b.inputs[i]);
  const std::vector<uint8_t> got = download(z, b.outputs[0]);
  auto ref = run_reference(g, in_bytes);
  REQUIRE_OK(ref);
  const OutputCheck check = compare_output(z, got.data(), ref->at("Z"), default_tolerance(z.dtype));
  INFO(check.beyond << " elements beyond the tolerance; worst at " << check.worst << ": got " << check.worst_got
                    << ", reference " << check.worst_ref);
  REQUIRE(check.pass);

  if (c.type == OpType::CAST || c.type == OpType::RELU) {
    const std::vector<uint8_t>& xb = in_bytes["X"];
    std::vector<uint8_t> want(got.size());
    const int64_t cols = c.shape.back(), n = z.numel();
    for (int64_t l = 0; l < n; ++l) {
      const int64_t r = l / cols, col = l % cols;
      float v = load_as_float(xb.data(), x.dtype, storage(x, r, col));
      if (c.type == OpType::RELU && v < 0) v = 0.0f;
      store_from_float(want.data(), z.dtype, storage(z, r, col), v);
    }
    int64_t first = -1;
    for (int64_t i = 0; i < n && first < 0; ++i)
      if (std::memcmp(got.data() + i * dtype_size(z.dtype), want.data() + i * dtype_size(z.dtype),
                      size_t(dtype_size(z.dtype))) != 0)
        first = i;
    INFO("first element that differs from the host's rounding: " << first);
    REQUIRE(first == -1);
  }
}

const std::vector<std::vector<int64_t>> kSizes = {{1}, {7}, {8}, {1001}, {1000003}, {1000, 1003}, {2, 3, 4, 5}};

}  // namespace

TEST_CASE("CAST converts between every pair of dtypes with round to nearest even", "[gpu]") {
  for (DType from : kTypes)
    for (DType to : kTypes)
      for (const auto& shape : kSizes)
        for (bool misalign : {false, true}) run_case({OpType::CAST, shape, {from}, to, {}, {}, {}, misalign});
}

TEST_CASE("RELU and GELU (tanh and erf) for every input and output dtype", "[gpu]") {
  for (DType from : kTypes)
    for (DType to : kTypes)
      for (const auto& shape : kSizes) {
        const bool misalign = shape[0] == 1001;
        run_case({OpType::RELU, shape, {from}, to, {}, {}, {}, misalign});
        run_case({OpType::GELU, shape, {from}, to, {}, {}, GeluApprox::tanh, misalign});
        run_case({OpType::GELU, shape, {from}, to, {}, {}, GeluApprox::none, misalign});
      }
}

// Every f16 value, the infinities and NaNs included: the 16-bit results take the fast forms
// (activations.cuh), which must hold the check's rounding margin at every input, the far tails too.
TEST_CASE("GELU (tanh and erf) and SILU of every f16 value into f16 and bf16", "[gpu]") {
  std::vector<double> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t bits = uint16_t(h);
    all[h] = load_as_float(&bits, DType::f16, 0);
  }
  for (DType to : {DType::f16, DType::bf16})
    for (OpType op : {OpType::GELU, OpType::SILU})
      for (GeluApprox form : {GeluApprox::none, GeluApprox::tanh}) {
        if (op == OpType::SILU && form == GeluApprox::none) continue;
        Case c{op, {256, 256}, {DType::f16}, to, {}, {}, form, false};
        c.x_values = all;
        run_case(c);
      }
}

TEST_CASE("ADD and BIAS_ADD for every combination of dtypes", "[gpu]") {
  const std::vector<std::vector<int64_t>> shapes = {{1}, {7}, {1001}, {33, 17}, {2, 3, 4, 5}};
  for (DType a : kTypes)
    for (DType b : kTypes)
      for (DType out : kTypes) {
        for (const auto& shape : shapes)
          for (bool misalign : {false, true}) {
            run_case({OpType::ADD, shape, {a, b}, out, {}, {}, {}, misalign});
            run_case({OpType::BIAS_ADD, shape, {a, b}, out, {}, {}, {}, misalign});
          }
      }
  // The large sizes, once per output dtype.
  for (DType out : kTypes)
    for (const auto& shape : std::vector<std::vector<int64_t>>{{1000003}, {1000, 1003}}) {
      run_case({OpType::ADD, shape, {DType::f16, DType::f32}, out, {}, {}, {}, false});
      run_case({OpType::BIAS_ADD, shape, {DType::bf16, DType::f32}, out, {}, {}, {}, false});
    }
}

TEST_CASE("elementwise ops on rank-2 operands of mixed layouts", "[gpu]") {
  const Layout R = Layout::rowmajor, C = Layout::colmajor;
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {1, 9}, {9, 1}, {7, 13}, {64, 96}, {1000, 1003}};
  for (const auto& shape : shapes)
    for (Layout la : {R, C})
      for (Layout lo : {R, C}) {
        for (bool misalign : {false, true}) {
          run_case({OpType::CAST, shape, {DType::f32}, DType::f16, {la}, lo, {}, misalign});
          run_case({OpType::RELU, shape, {DType::bf16}, DType::f32, {la}, lo, {}, misalign});
          run_case({OpType::GELU, shape, {DType::f16}, DType::bf16, {la}, lo, GeluApprox::none, misalign});
          run_case({OpType::BIAS_ADD, shape, {DType::f16, DType::f32}, DType::f16, {la}, lo, {}, misalign});
        }
        for (Layout lb : {R, C}) run_case({OpType::ADD, shape, {DType::f16, DType::bf16}, DType::f32, {la, lb}, lo});
      }
}

TEST_CASE("launch_fill_random draws the same bits as generate_input", "[gpu]") {
  Device& dev = device();
  Init normal;
  Init shifted;
  shifted.mean = 0.5;
  shifted.std = 3.0;
  Init zeros, ones;
  zeros.kind = InitKind::zeros;
  ones.kind = InitKind::ones;
  const std::vector<Init> inits = {normal, shifted, uniform_init(-1.0, 1.0), uniform_init(-2.0, 7.0), zeros, ones};
  struct Draw {
    uint64_t seed;
    const char* name;
    int64_t n;
  };
  const std::vector<Draw> draws = {{0, "A", 1},        {42, "A", 1000},           {42, "B", 1000},
                                   {uint64_t(-1), "weights.0", 1000}, {1234567, "x:y-z", 1000},
                                   {42, "weights.0", (int64_t(1) << 20) + 3}};
  for (DType dt : kTypes)
    for (const Init& init : inits)
      for (const Draw& d : draws) {
        Tensor t = make_tensor(d.name, {d.n}, dt);
        t.init = init;
        INFO(describe(t) << " " << d.name << " seed " << d.seed << " init kind " << int(init.kind));
        const std::vector<uint8_t> want = generate_input(t, d.seed);
        Layouter lay;
        void* direct = lay.place(t);
        void* through_device = lay.place(t);
        REQUIRE_OK(dev.poison(direct, size_t(t.bytes())));
        REQUIRE_OK(dev.synchronize());
        REQUIRE_OK(cuda::launch_fill_random(direct, dt, d.n, draw_params(init, d.seed, t), nullptr));
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        REQUIRE_OK(dev.fill_input(t, through_device, d.seed));
        for (void* p : {direct, through_device}) {
          const std::vector<uint8_t> got = download(t, p);
          int64_t first = -1;
          for (int64_t i = 0; i < d.n && first < 0; ++i)
            if (std::memcmp(got.data() + i * dtype_size(dt), want.data() + i * dtype_size(dt), size_t(dtype_size(dt))))
              first = i;
          INFO("first element that differs: " << first << (p == direct ? " (direct)" : " (fill_input)"));
          REQUIRE(first == -1);
        }
      }
}

TEST_CASE("launch_convert rounds like the host", "[gpu]") {
  Device& dev = device();
  for (DType from : kTypes)
    for (DType to : kTypes)
      for (int64_t n : {int64_t(1), int64_t(9), int64_t(1000003)}) {
        Tensor in = make_tensor("in", {n}, from);
        in.init = uniform_init(-70000.0, 70000.0);  // beyond f16's range: infinities too
        const Tensor out = make_tensor("out", {n}, to);
        INFO(describe(in) << " -> " << describe(out));
        Layouter lay;
        void* pi = lay.place(in);
        void* po = lay.place(out);
        REQUIRE_OK(dev.fill_input(in, pi, 3));
        REQUIRE_OK(dev.poison(po, size_t(out.bytes())));
        REQUIRE_OK(dev.synchronize());
        REQUIRE_OK(cuda::launch_convert(pi, from, po, to, n, nullptr));
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        const std::vector<uint8_t> src = download(in, pi), got = download(out, po);
        std::vector<uint8_t> want(got.size());
        for (int64_t i = 0; i < n; ++i) store_from_float(want.data(), to, i, load_as_float(src.data(), from, i));
        REQUIRE(got == want);
      }
}

TEST_CASE("launch_bias_act matches BIAS_ADD then the activation in the reference", "[gpu]") {
  Device& dev = device();
  struct Geometry {
    int64_t batch, rows, cols;
    Layout layout;
  };
  const std::vector<Geometry> geometries = {{1, 1, 1, Layout::rowmajor},   {1, 7, 13, Layout::rowmajor},
                                            {1, 7, 13, Layout::colmajor},  {3, 17, 9, Layout::rowmajor},
                                            {1, 64, 96, Layout::colmajor}, {1, 1000, 1003, Layout::rowmajor},
                                            {1, 1000, 1003, Layout::colmajor}};
  for (const Geometry& geo : geometries)
    for (DType ct : kTypes)
      for (int bias_kind = 0; bias_kind < 4; ++bias_kind)  // f16, bf16, f32 bias, or none
        for (Act act : {Act::none, Act::relu, Act::gelu}) {
          const bool big = geo.rows * geo.cols > 100000;
          if (big && (bias_kind == 1 || (act == Act::relu && ct != DType::bf16))) continue;  // keep it quick
          const bool has_bias = bias_kind < 3;
          const DType bt = has_bias ? kTypes[bias_kind] : DType::f32;
          Graph g;
          g.seed = 99;
          const std::vector<int64_t> shape = geo.batch > 1 ? std::vector<int64_t>{geo.batch, geo.rows, geo.cols}
                                                           : std::vector<int64_t>{geo.rows, geo.cols};
          Tensor c = make_tensor("C", shape, ct, geo.layout);
          c.init = uniform_init(-4.0, 4.0);
          const TensorId c_id = g.add_tensor(c);
          TensorId bias_id = kNone, cur = c_id;
          if (has_bias) {
            Tensor bias = make_tensor("bias", {geo.cols}, bt);
            bias.init = uniform_init(-1.0, 1.0);
            bias_id = g.add_tensor(bias);
            // The sum is kept in f32 so that the reference rounds once, at the end, as the kernel does.
            const TensorId sum = g.add_tensor(make_tensor("sum", shape, DType::f32, geo.layout));
            test::add_op(g, "bias", OpType::BIAS_ADD, {c_id, bias_id}, sum);
            cur = sum;
          }
          const TensorId out = g.add_tensor(make_tensor("out", shape, ct, geo.layout));
          test::add_op(g, "act", act == Act::relu ? OpType::RELU : act == Act::gelu ? OpType::GELU : OpType::CAST,
                       {cur}, out)
              .attrs.approximate = GeluApprox::tanh;
          g.outputs = {out};
          INFO(describe(c) << " batch " << geo.batch << " bias " << (has_bias ? dtype_name(bt) : "none") << " act "
                           << act_name(act));
          REQUIRE(verify(g).empty());

          Layouter lay;
          void* pc = lay.place(c);
          void* pb = has_bias ? lay.place(g.tensor(bias_id)) : nullptr;
          REQUIRE_OK(dev.fill_input(c, pc, *g.seed));
          if (has_bias) REQUIRE_OK(dev.fill_input(g.tensor(bias_id), pb, *g.seed));
          std::map<std::string, std::vector<uint8_t>> in_bytes;
          in_bytes["C"] = download(c, pc);
          if (has_bias) in_bytes["bias"] = download(g.tensor(bias_id), pb);
          REQUIRE_OK(dev.synchronize());
          REQUIRE_OK(cuda::launch_bias_act(pc, ct, geo.batch, geo.rows, geo.cols, geo.layout, pb, bt, act, nullptr));
          REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
          const std::vector<uint8_t> got = download(c, pc);
          if (!has_bias && act == Act::none) {
            REQUIRE(got == in_bytes["C"]);  // nothing to do: C is left as it was
            continue;
          }
          auto ref = run_reference(g, in_bytes);
          REQUIRE_OK(ref);
          const Tensor& out_t = g.tensor(out);
          const OutputCheck check = compare_output(out_t, got.data(), ref->at("out"), default_tolerance(ct));
          INFO(check.beyond << " elements beyond the tolerance; worst at " << check.worst << ": got "
                            << check.worst_got << ", reference " << check.worst_ref);
          REQUIRE(check.pass);
        }
}

TEST_CASE("elementwise launchers refuse what they cannot do", "[gpu]") {
  Graph g;
  const TensorId x = g.add_tensor(make_tensor("X", {4, 4}, DType::f16));
  const TensorId y = g.add_tensor(make_tensor("Y", {4, 4}, DType::f16));
  const TensorId z = g.add_tensor(make_tensor("Z", {4, 4}, DType::f16));
  Op add;
  add.name = "add";
  add.type = OpType::ADD;
  add.inputs = {x, y};
  add.outputs = {z};
  int dummy[3] = {};
  Binding b{{&dummy[0], &dummy[1]}, {&dummy[2]}};
  // A kernel of another op, a binding of the wrong arity, a missing buffer: errors, no launch.
  REQUIRE_FALSE(cuda::make_elementwise_kernel(kernel_def("cuda.relu"), g, add, b, nullptr).ok());
  REQUIRE_FALSE(cuda::make_elementwise_kernel(kernel_def("cuda.add"), g, add, Binding{{&dummy[0]}, {&dummy[2]}}, nullptr).ok());
  REQUIRE_FALSE(cuda::make_elementwise_kernel(kernel_def("cuda.add"), g, add, Binding{{&dummy[0], nullptr}, {&dummy[2]}}, nullptr).ok());
  REQUIRE(cuda::make_elementwise_kernel(kernel_def("cuda.add"), g, add, b, nullptr).ok());
  REQUIRE_FALSE(cuda::launch_bias_act(&dummy[0], DType::f16, 1, 0, 4, Layout::rowmajor, nullptr, DType::f16, Act::relu, nullptr).ok());
  REQUIRE_FALSE(cuda::launch_convert(nullptr, DType::f16, &dummy[0], DType::f32, 4, nullptr).ok());
  REQUIRE_FALSE(cuda::launch_fill_random(&dummy[0], DType::f32, -1, rng::DrawParams{}, nullptr).ok());
  REQUIRE(cuda::launch_fill_random(nullptr, DType::f32, 0, rng::DrawParams{}, nullptr).ok());
}
