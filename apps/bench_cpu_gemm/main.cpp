// Times the CPU backend's fused GEMM + bias + ReLU against OpenBLAS's plain cblas_sgemm on the
// same buffers: usage gexec_bench_cpu [size=2048] [iterations=10]. With MxNxK shapes instead
// (gexec_bench_cpu 64x11008x4096,256x4096x11008 [iterations]), times the product against a
// constant weight stored [N, K] (as ONNX models' weights are kept) through cblas_sgemm and through
// the backend's packed B (gexec/backends/cpu_packed_gemm.hpp), on the same buffers.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gexec/backends/cpu_packed_gemm.hpp"
#include "gexec/backends/cpu_device.hpp"
#include "gexec/kernels/declared.hpp"

using namespace gexec;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int fail(const Error& e) {
  std::fprintf(stderr, "error: %s\n", e.message.c_str());
  return int(e.code);
}

// One shape: cblas_sgemm against the packed product; returns false on a bad shape.
bool time_weight_product(const std::string& shape, int iters) {
  long long m = 0, n = 0, k = 0;
  char tail = 0;
  if (std::sscanf(shape.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &tail) != 3) return false;
  const long long most = 1ll << 30;  // elements per matrix: what cblas_sgemm's int sizes and memory allow
  if (m <= 0 || n <= 0 || k <= 0 || m > most / k || n > most / k || m > most / n) return false;
  std::vector<float> a(size_t(m * k)), w(size_t(n * k)), c(size_t(m * n)), c_packed(size_t(m * n));
  uint32_t state = 1;
  for (auto* v : {&a, &w})
    for (float& x : *v) x = float((state = state * 1664525u + 1013904223u) >> 8) / float(1 << 24) - 0.5f;
  auto blas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(k), 1.0f, a.data(), int(k), w.data(),
                int(k), 0.0f, c.data(), int(n));
  };
  std::unique_ptr<cpu::PackedB> packed;
  const double pack_s = seconds([&] { packed = std::make_unique<cpu::PackedB>(w.data(), k, n, 1, k); });
  auto mine = [&] { packed->multiply(a.data(), k, m, 1.0f, c_packed.data(), n); };
  // Each alone first, then interleaved: OpenBLAS's threads keep spinning for a while after a call,
  // which slows the packed product's threads when it runs right after one.
  const auto timed = [iters](auto&& f) {
    f(), f();
    std::vector<double> t;
    for (int i = 0; i < iters; ++i) t.push_back(seconds(f));
    return median(t);
  };
  const double mm = timed(mine), mb = timed(blas);
  std::vector<double> after;
  for (int i = 0; i < iters; ++i) blas(), after.push_back(seconds(mine));
  double worst = 0;  // the two results agree to f32 rounding of K terms
  for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, double(std::abs(c[i] - c_packed[i])));
  const double flops = 2.0 * double(m) * double(n) * double(k), ma = median(after);
  std::printf("  %-20s cblas_sgemm %8.3f ms %7.1f GFLOP/s | packed %8.3f ms %7.1f GFLOP/s | packed / cblas %.3f | "
              "packed right after cblas %.3f ms | packing once %.1f ms | max |diff| %.2g | the backend runs it %s\n",
              shape.c_str(), mb * 1e3, flops / mb * 1e-9, mm * 1e3, flops / mm * 1e-9, mm / mb, ma * 1e3, pack_s * 1e3,
              worst, cpu::PackedB::suits(m) ? "packed" : "on OpenBLAS");
  return true;
}

int time_weight_products(const std::string& shapes, int iters) {
  if (!cpu::PackedB::available()) return std::fprintf(stderr, "this CPU has no AVX-512F: no packed product\n"), 2;
  std::printf("%s; medians of %d, weights [N, K]\n", open_cpu_device()->caps().name.c_str(), iters);
  for (size_t at = 0; at <= shapes.size();) {
    const size_t end = std::min(shapes.find(',', at), shapes.size());
    const std::string shape = shapes.substr(at, end - at);
    if (!time_weight_product(shape, iters))
      return std::fprintf(stderr, "bad shape '%s': MxNxK wanted, each matrix at most 2^30 elements\n", shape.c_str()), 2;
    at = end + 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]).find('x') != std::string::npos)
    return time_weight_products(argv[1], argc > 2 ? std::max(1, std::atoi(argv[2])) : 10);
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 2048;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 10;
  if (n <= 0 || iters <= 0) return std::fprintf(stderr, "usage: %s [size] [iterations]\n", argv[0]), 2;

  Graph g;
  g.name = "bench";
  auto tensor = [&](const char* name, std::vector<int64_t> shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = DType::f32;
    return g.add_tensor(t);
  };
  const TensorId a = tensor("A", {n, n}), b = tensor("B", {n, n}), bias = tensor("Bias", {n});
  const TensorId c = tensor("C", {n, n});
  Op op;
  op.name = "gemm";
  op.type = OpType::GEMM_BIAS_ACT;
  op.inputs = {a, b, bias};
  op.outputs = {c};
  op.attrs.act = Act::relu;
  g.ops.push_back(op);

  auto dev = open_cpu_device();
  const int64_t matrix = n * n * 4;
  auto arena = dev->allocate_arena(4 * matrix + n * 4);
  if (!arena) return fail(arena.error());
  auto* base = static_cast<uint8_t*>(*arena);
  void *pa = base, *pb = base + matrix, *pc = base + 2 * matrix, *pc_plain = base + 3 * matrix;
  void* pbias = base + 4 * matrix;
  for (auto [t, p] : {std::pair{a, pa}, std::pair{b, pb}, std::pair{bias, pbias}}) {
    Status s = dev->fill_input(g.tensor(t), p, 1);
    if (!s) return fail(s.error());
  }

  const std::vector<KernelDef> defs = cpu_kernel_defs();
  const auto def = std::find_if(defs.begin(), defs.end(), [](const KernelDef& d) { return d.name == "cpu.gemm_bias_act"; });
  auto kernel = dev->make_kernel(*def, g, g.ops[0], Binding{{pa, pb, pbias}, {pc}, {}}, {});
  if (!kernel) return fail(kernel.error());
  if (Status s = (*kernel)->prepare(); !s) return fail(s.error());

  const int ni = static_cast<int>(n);
  auto plain = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, static_cast<const float*>(pa), ni,
                static_cast<const float*>(pb), ni, 0.0f, static_cast<float*>(pc_plain), ni);
  };
  auto fused = [&] { (void)(*kernel)->run(); };
  for (int w = 0; w < 2; ++w) plain(), fused();
  // Interleaved, so that both see the same machine state (clock, other load).
  std::vector<double> tp, tf;
  for (int i = 0; i < iters; ++i) {
    tp.push_back(seconds(plain));
    tf.push_back(seconds(fused));
  }
  const double mp = median(tp), mf = median(tf), flops = 2.0 * double(n) * double(n) * double(n);
  std::printf("%s\n", dev->caps().name.c_str());
  std::printf("%lld^3 f32, %d iterations, medians:\n", static_cast<long long>(n), iters);
  std::printf("  cblas_sgemm, plain               %9.3f ms  %7.1f GFLOP/s\n", mp * 1e3, flops / mp * 1e-9);
  std::printf("  cpu.gemm_bias_act, bias + relu   %9.3f ms  %7.1f GFLOP/s\n", mf * 1e3, flops / mf * 1e-9);
  std::printf("  ratio fused / plain              %9.3f (target <= 1.2)\n", mf / mp);
  return mf / mp <= 1.2 ? 0 : 1;
}
