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
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/backends/cuda/bare_gemm.hpp"
#include "../../src/backends/cuda/cuda_device.hpp"
#include "../../src/backends/cuda/elementwise.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/io/load.hpp"

using namespace gexec;

namespace {

// The bare product on its own buffers: row-major C = A B as the column-major C^T = B^T A^T, as
// gexec computes it.
struct BareProduct {
  cuda::DeviceMemory a, b, bias, c, ws;
  std::optional<cuda::BareGemm> gemm;
  cudaStream_t stream = nullptr;

  Status run() const { return gemm->run(b.get(), a.get(), c.get(), ws.get(), stream); }
};

Result<BareProduct> make_bare(cuda::CudaDevice& dev, int64_t m, int64_t n, int64_t k) {
  BareProduct p;
  p.stream = dev.stream();
  auto alloc = [](cuda::DeviceMemory& mem, size_t bytes) -> Status {
    auto r = cuda::DeviceMemory::allocate(bytes);
    if (!r) return r.error();
    mem = std::move(*r);
    return {};
  };
  GEXEC_TRY(alloc(p.a, size_t(m * k) * 2));
  GEXEC_TRY(alloc(p.b, size_t(k * n) * 2));
  GEXEC_TRY(alloc(p.bias, size_t(n) * 2));
  GEXEC_TRY(alloc(p.c, size_t(m * n) * 2));
  GEXEC_TRY(alloc(p.ws, cuda::kGemmWorkspaceBytes));
  const rng::DrawParams draw{rng::Dist::normal, 0.0, 0.25, 0x62617265ull};
  GEXEC_TRY(cuda::launch_fill_random(p.a.get(), DType::f16, m * k, draw, p.stream));
  GEXEC_TRY(cuda::launch_fill_random(p.b.get(), DType::f16, k * n, draw, p.stream));
  GEXEC_TRY(cuda::launch_fill_random(p.bias.get(), DType::f16, n, draw, p.stream));
  auto gemm = cuda::BareGemm::create(dev.cublaslt(), n, m, k, p.bias.get(), cuda::kGemmWorkspaceBytes);
  if (!gemm) return gemm.error();
  p.gemm = std::move(*gemm);
  GEXEC_CUDA_TRY(cudaStreamSynchronize(p.stream));
  return p;
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
  // Prepared as `gexec run --passes none --backend cuda` prepares it.
  PrepareOptions options;
  options.backend = BackendChoice::cuda;
  options.passes = "none";
  PreparedRun run(*graph, options);
  std::ostringstream prints;
  if (Status st = run.run_passes(prints); !st) return fail(st.error());
  if (Status st = run.choose_target(); !st) return fail(st.error());
  const std::shared_ptr<Device>& dev = run.device();
  auto* cdev = dynamic_cast<cuda::CudaDevice*>(dev.get());
  if (once) {
    auto bare = make_bare(*cdev, shape->m, shape->n, shape->k);
    if (!bare) return fail(bare.error());
    if (Status st = bare->run(); !st) return fail(st.error());
    if (Status st = dev->synchronize(); !st) return fail(st.error());
    return 0;
  }
  if (Status st = run.select(); !st) return fail(st.error());
  if (Status st = run.create_executor(); !st) return fail(st.error());
  Executor& ex = run.executor();
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
      const std::function<Status()> enqueue = [&] { return is_gexec ? ex.enqueue() : bare->run(); };
      auto us = median_us(*dev, enqueue, graph_mode);
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
