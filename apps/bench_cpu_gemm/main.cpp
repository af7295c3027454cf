// Times the CPU backend's fused GEMM + bias + ReLU against OpenBLAS's plain cblas_sgemm on the
// same buffers: usage gexec_bench_cpu [size=2048] [iterations=10].
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
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
  auto kernel = dev->make_kernel(*def, g, g.ops[0], Binding{{pa, pb, pbias}, {pc}}, {});
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
