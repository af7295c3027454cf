// Per-iteration time of a one-GEMM graph run by gexec against the same product as a bare
// cuBLASLt loop: how much the executor adds to the library's own launch cost.
//
// Usage: gexec_bench_launch [GRAPH] [ROUNDS]   (default graphs/gemm_bias_relu.json, 5)
//        gexec_bench_launch --once [GRAPH]
// --once opens the device, runs the bare product once and exits: the least a process that runs
// one cuBLASLt product does, for comparing the wall time of whole processes with gexec's.
// GRAPH must hold one GEMM_BIAS_ACT op (act relu) on row-major f16 A [M,K], B [K,N] and C; it
// runs as written (no passes). The bare loop computes the same M x N x K product with cuBLASLt's
// RELU_BIAS epilogue and an f16 bias, on its own random buffers, with the heuristic's first
// algorithm and nothing else per call. Both are timed by the same timer (Device::time_runs:
// warm-up, batches of back-to-back iterations between CUDA events, medians), with direct
// launches and with CUDA graph replay, alternating in each round so that changes in the
// machine's state (clocks, other load) reach both alike.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../../src/backends/cuda/cuda_device.hpp"
#include "../../src/backends/cuda/elementwise.hpp"
#include "../../src/backends/cuda/raii.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/select.hpp"

using namespace gexec;

namespace {

constexpr size_t kWorkspace = size_t(32) << 20;

// The bare product: D^T = B^T A^T in cuBLASLt's column-major terms, as gexec computes it.
struct BareGemm {
  cuda::DeviceMemory a, b, bias, d, ws;
  cuda::MatmulDesc desc;
  cuda::MatrixLayout lx, ly, ld;
  cublasLtMatmulHeuristicResult_t algo{};
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;

  Status run() {
    const float alpha = 1.0f, beta = 0.0f;
    GEXEC_CUBLAS_TRY(cublasLtMatmul(lt, desc.get(), &alpha, b.get(), lx.get(), a.get(), ly.get(), &beta, d.get(),
                                    ld.get(), d.get(), ld.get(), &algo.algo, ws.get(), kWorkspace, stream));
    return {};
  }
};

Result<BareGemm> make_bare(cuda::CudaDevice& dev, int64_t m, int64_t n, int64_t k) {
  BareGemm g;
  g.lt = dev.cublaslt();
  g.stream = dev.stream();
  auto alloc = [](cuda::DeviceMemory& mem, int64_t elems) -> Status {
    auto r = cuda::DeviceMemory::allocate(size_t(elems) * 2);
    if (!r) return r.error();
    mem = std::move(*r);
    return {};
  };
  GEXEC_TRY(alloc(g.a, m * k));
  GEXEC_TRY(alloc(g.b, k * n));
  GEXEC_TRY(alloc(g.bias, n));
  GEXEC_TRY(alloc(g.d, m * n));
  auto ws = cuda::DeviceMemory::allocate(kWorkspace);
  if (!ws) return ws.error();
  g.ws = std::move(*ws);
  const rng::DrawParams p{rng::Dist::normal, 0.0, 0.25, 0x62617265ull};
  GEXEC_TRY(cuda::launch_fill_random(g.a.get(), DType::f16, m * k, p, g.stream));
  GEXEC_TRY(cuda::launch_fill_random(g.b.get(), DType::f16, k * n, p, g.stream));
  GEXEC_TRY(cuda::launch_fill_random(g.bias.get(), DType::f16, n, p, g.stream));

  auto desc = cuda::make_matmul_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (!desc) return desc.error();
  GEXEC_TRY(cuda::set_attribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_RELU_BIAS)));
  GEXEC_TRY(cuda::set_attribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(g.bias.get())));
  auto lx = cuda::make_matrix_layout(CUDA_R_16F, uint64_t(n), uint64_t(k), n);
  auto ly = cuda::make_matrix_layout(CUDA_R_16F, uint64_t(k), uint64_t(m), k);
  auto ld = cuda::make_matrix_layout(CUDA_R_16F, uint64_t(n), uint64_t(m), n);
  if (!lx) return lx.error();
  if (!ly) return ly.error();
  if (!ld) return ld.error();
  auto pref = cuda::make_preference();
  if (!pref) return pref.error();
  GEXEC_TRY(cuda::set_attribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kWorkspace)));
  int found = 0;
  GEXEC_CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(g.lt, desc->get(), lx->get(), ly->get(), ld->get(), ld->get(),
                                                  pref->get(), 1, &g.algo, &found));
  if (found < 1) return runtime_error("cuBLASLt has no algorithm for the bare product");
  g.desc = std::move(*desc);
  g.lx = std::move(*lx);
  g.ly = std::move(*ly);
  g.ld = std::move(*ld);
  GEXEC_CUDA_TRY(cudaStreamSynchronize(g.stream));
  return g;
}

Result<double> median_us(Device& dev, const std::function<Status()>& enqueue, bool graph) {
  TimingOptions t;
  t.iters = 1000;
  t.warmup_ms = 200;
  t.cuda_graph = graph;
  auto samples = dev.time_runs(enqueue, t, nullptr);
  if (!samples) return samples.error();
  return summarize(*samples).median;
}

int fail(const Error& e) {
  std::fprintf(stderr, "gexec_bench_launch: %s\n", e.message.c_str());
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::string(argv[1]) == "--once";
  if (once) --argc, ++argv;
  const std::string path = argc > 1 ? argv[1] : "graphs/gemm_bias_relu.json";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  auto graph = load_graph_file(path);
  if (!graph) {
    std::fprintf(stderr, "gexec_bench_launch: %s\n", graph.error().message.c_str());
    return 2;
  }
  const auto shape = graph->ops.size() == 1 ? gemm_shape(*graph, graph->ops[0], nullptr) : std::nullopt;
  const bool f16 = shape && graph->tensor(graph->ops[0].inputs[0]).dtype == DType::f16 &&
                   graph->tensor(graph->ops[0].inputs[1]).dtype == DType::f16 &&
                   graph->tensor(graph->ops[0].outputs[0]).dtype == DType::f16;
  if (!shape || !f16 || graph->ops[0].type != OpType::GEMM_BIAS_ACT || graph->ops[0].attrs.act != Act::relu ||
      !shape->has_bias || shape->batch != 1 || shape->trans_a || shape->trans_b ||
      shape->layout_a != Layout::rowmajor || shape->layout_b != Layout::rowmajor ||
      shape->layout_c != Layout::rowmajor) {
    std::fprintf(stderr,
                 "gexec_bench_launch: %s: needs one GEMM_BIAS_ACT op (act relu, with a bias) on row-major, "
                 "untransposed f16 A, B and C\n",
                 path.c_str());
    return 2;
  }
  auto dev = open_cuda_device(0);
  if (!dev) return fail(dev.error());
  auto* cdev = dynamic_cast<cuda::CudaDevice*>(dev->get());
  if (once) {
    auto bare = make_bare(*cdev, shape->m, shape->n, shape->k);
    if (!bare) return fail(bare.error());
    if (Status st = bare->run(); !st) return fail(st.error());
    if (Status st = (*dev)->synchronize(); !st) return fail(st.error());
    return 0;
  }
  auto sel = select_kernels(*graph, (*dev)->caps(), Backend::cuda);
  if (!sel) return fail(sel.error());
  auto ex = Executor::create(**dev, *graph, *sel, plan_buffers(*graph), 0);
  if (!ex) return fail(ex.error());
  auto bare = make_bare(*cdev, shape->m, shape->n, shape->k);
  if (!bare) return fail(bare.error());

  std::printf("%s: %lldx%lldx%lld, per-iteration medians in us, %d rounds\n", path.c_str(), (long long)shape->m,
              (long long)shape->n, (long long)shape->k, rounds);
  std::printf("%-6s %14s %14s %14s %14s\n", "round", "gexec direct", "bare direct", "gexec graph", "bare graph");
  std::vector<std::vector<double>> all(4);
  for (int r = 0; r < rounds; ++r) {
    double v[4];
    for (int i = 0; i < 4; ++i) {
      const bool graph_mode = i >= 2, is_gexec = i % 2 == 0;
      const std::function<Status()> enqueue = [&] { return is_gexec ? (*ex)->enqueue() : bare->run(); };
      auto us = median_us(**dev, enqueue, graph_mode);
      if (!us) return fail(us.error());
      v[i] = *us;
      all[size_t(i)].push_back(*us);
    }
    std::printf("%-6d %14.2f %14.2f %14.2f %14.2f\n", r + 1, v[0], v[1], v[2], v[3]);
  }
  std::printf("%-6s %14.2f %14.2f %14.2f %14.2f\n", "median", summarize(all[0]).median, summarize(all[1]).median,
              summarize(all[2]).median, summarize(all[3]).median);
  return 0;
}
