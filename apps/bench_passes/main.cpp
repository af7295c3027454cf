// Benchmark of loading and of the default pass pipeline on generated MLP chains of 1k to 100k ops.
//
// Usage: gexec_bench_passes [OPS ...]   (default 1000 10000 100000)
// Each graph is a chain of layers MATMUL -> BIAS_ADD -> RELU with small shapes, built in
// memory, saved to text, loaded back (which checks it), then run through the default pipeline,
// which fuses every layer into one GEMM_BIAS_ACT. Times are the best of a few repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gexec/io/load.hpp"
#include "gexec/ir/graph_build.hpp"
#include "gexec/passes/pipeline.hpp"

using namespace gexec;

namespace {

constexpr int64_t kRows = 8, kWidth = 16;

// A chain of ceil(ops / 3) layers; the last layer's output is the graph's output.
Graph mlp_chain(int64_t ops) {
  const int64_t layers = std::max<int64_t>(1, (ops + 2) / 3);
  Graph g;
  g.name = "mlp_chain_" + std::to_string(ops);
  auto tensor = [&](std::string name, std::vector<int64_t> shape, bool constant) {
    return add_tensor(g, std::move(name), std::move(shape), DType::f16, constant);
  };
  auto op = [&](std::string name, OpType type, std::vector<TensorId> inputs, TensorId output) {
    add_op(g, std::move(name), type, std::move(inputs), output);
  };
  TensorId x = tensor("x0", {kRows, kWidth}, false);
  for (int64_t i = 0; i < layers; ++i) {
    const std::string s = std::to_string(i);
    TensorId w = tensor("w" + s, {kWidth, kWidth}, true);
    TensorId b = tensor("b" + s, {kWidth}, true);
    TensorId h = tensor("h" + s, {kRows, kWidth}, false);
    TensorId hb = tensor("hb" + s, {kRows, kWidth}, false);
    TensorId y = tensor(std::string("x").append(std::to_string(i + 1)), {kRows, kWidth}, false);
    op("mm" + s, OpType::MATMUL, {x, w}, h);
    op("bias" + s, OpType::BIAS_ADD, {h, b}, hb);
    op("relu" + s, OpType::RELU, {hb}, y);
    x = y;
  }
  g.outputs = {x};
  return g;
}

// Wall and CPU time of one call. On a shared machine the CPU time of this thread is the steadier
// figure: it leaves out the time other processes held the cores.
struct Timing {
  double wall = 0, cpu = 0;
};

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

Timing time_of(const std::function<void()>& f) {
  const double cpu0 = thread_cpu_ms();
  const auto wall0 = std::chrono::steady_clock::now();
  f();
  return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count(),
          thread_cpu_ms() - cpu0};
}

void keep_best(Timing& best, const Timing& t) {
  best.wall = std::min(best.wall, t.wall);
  best.cpu = std::min(best.cpu, t.cpu);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  const int reps = 5;

  std::printf("%8s %10s %10s %12s %12s %10s %13s %10s\n", "ops", "save ms", "load ms", "pipeline ms",
              "(cpu ms)", "cpu us/op", "passes alone", "ops after");
  for (int64_t n : sizes) {
    const Graph built = mlp_chain(n);
    const Timing inf{1e300, 1e300};
    Timing save = inf, load = inf, pipe = inf;
    double passes_ms = 1e300;
    size_t ops_after = 0;
    std::string per_pass;  // of the repetition whose passes were fastest
    for (int r = 0; r < reps; ++r) {
      std::string text;
      keep_best(save, time_of([&] { text = save_graph(built); }));
      Result<Graph> loaded = Graph{};
      keep_best(load, time_of([&] { loaded = load_graph_text(text, "bench.json", "."); }));
      if (!loaded.ok()) {
        std::fprintf(stderr, "loading the generated graph failed: %s\n", loaded.error().message.c_str());
        return 1;
      }
      Graph work = std::move(loaded).value();
      PipelineOptions opts;
      opts.passes = default_pipeline();
      std::ostringstream sink;
      Result<std::vector<PassRecord>> rec = std::vector<PassRecord>{};
      keep_best(pipe, time_of([&] { rec = run_pipeline(work, opts, sink); }));
      if (!rec.ok()) {
        std::fprintf(stderr, "the pipeline failed: %s\n", rec.error().message.c_str());
        return 1;
      }
      double total = 0;
      std::string detail;
      for (const PassRecord& p : rec.value()) {
        total += p.millis;
        char buf[96];
        std::snprintf(buf, sizeof buf, " %s %.2f", p.name.c_str(), p.millis);
        detail += buf;
      }
      if (total < passes_ms) per_pass = detail;
      passes_ms = std::min(passes_ms, total);
      ops_after = work.ops.size();
    }
    std::printf("%8zu %10.2f %10.2f %12.2f %12.2f %10.3f %13.2f %10zu\n", built.ops.size(), save.wall, load.wall,
                pipe.wall, pipe.cpu, 1000.0 * pipe.cpu / double(built.ops.size()), passes_ms, ops_after);
    std::printf("%8s passes alone, ms:%s\n", "", per_pass.c_str());
  }
  std::printf("Best of %d. pipeline: run_pipeline with the default passes, wall and this thread's CPU time,\n"
              "including verify() after each pass and the copy that tells whether a pass changed the graph;\n"
              "passes alone: the sum of the passes' own times (PassRecord::millis).\n", reps);
  return 0;
}
