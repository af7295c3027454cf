// Timing: statistics, the batching rule, work counts, the host timer and the timing report.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../../src/app/timing_report.hpp"
#include "catch.hpp"
#include "skip.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/exec/work.hpp"
#include "gexec/io/load.hpp"
#if GEXEC_HAVE_CPU
#include "../../src/backends/cpu/cpu_timer.hpp"
#endif

using namespace gexec;

namespace {

bool near(double a, double b, double tol = 1e-9) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

Graph load(const std::string& tensors, const std::string& ops, const std::string& outputs) {
  const std::string text = R"({"format": "gexec.graph", "version": 1, "tensors": [)" + tensors + R"(], "ops": [)" +
                           ops + R"(], "outputs": [)" + outputs + "]}";
  auto g = load_graph_text(text, "test.json", ".");
  if (!g) FAIL(g.error().message);
  return *g;
}

// A device that runs nothing: its kernels count their runs, and its timer returns samples
// the test chose, recording the options it was given.
class ScriptedKernel final : public Kernel {
 public:
  explicit ScriptedKernel(int* runs) : runs_(runs) {}
  Status prepare() override { return {}; }
  Status run() override {
    ++*runs_;
    return {};
  }

 private:
  int* runs_;
};

class ScriptedDevice final : public Device {
 public:
  std::vector<double> whole, per_op;  // samples for the whole run, and for each op alone
  std::vector<TimingOptions> seen;
  std::map<std::string, int> runs;
  bool fail = false;

  Backend backend() const override { return Backend::cpu; }
  const DeviceCaps& caps() const override { return caps_; }
  Result<void*> allocate_arena(int64_t bytes) override {
    arena_.assign(size_t(bytes) + 1, 0);
    return static_cast<void*>(arena_.data());
  }
  Status fill_input(const Tensor&, void*, uint64_t) override { return {}; }
  Status upload(void* dst, const void* src, size_t n) override { return std::memcpy(dst, src, n), Status(); }
  Status download(void* dst, const void* src, size_t n) override { return std::memcpy(dst, src, n), Status(); }
  Status poison(void* dst, size_t n) override { return std::memset(dst, 0xFF, n), Status(); }
  Result<std::unique_ptr<Kernel>> make_kernel(const KernelDef&, const Graph&, const Op& op, const Binding&,
                                              const KernelOptions&) override {
    return std::unique_ptr<Kernel>(new ScriptedKernel(&runs[op.name]));
  }
  Status synchronize() override { return {}; }
  Result<std::vector<double>> time_runs(const std::function<Status()>& enqueue, const TimingOptions& opts,
                                        bool* graph_used) override {
    seen.push_back(opts);
    if (fail) return runtime_error("device lost");
    GEXEC_TRY(enqueue());
    if (graph_used) *graph_used = opts.cuda_graph;
    if (opts.info) *opts.info = TimingInfo{7, 42, 1.5};
    return seen.size() == 1 ? whole : per_op;
  }

 private:
  DeviceCaps caps_;
  std::vector<char> arena_;
};

}  // namespace

TEST_CASE("summarize: order statistics, mean and spread", "[timing]") {
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(double(i));
  std::vector<double> shuffled = v;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);

  const TimingStats s = summarize(shuffled);
  CHECK(s.samples == 10);
  CHECK(s.min == 1.0);
  CHECK(s.max == 10.0);
  CHECK(near(s.mean, 5.5));
  CHECK(near(s.median, 5.5));  // even count: between the two middle values
  CHECK(near(s.p90, 9.1));     // rank 0.9 * 9 = 8.1: 9 + 0.1 * (10 - 9)
  CHECK(near(s.p99, 9.91));
  double ss = 0;
  for (double x : v) ss += (x - 5.5) * (x - 5.5);
  CHECK(near(s.cv, std::sqrt(ss / 9) / 5.5));

  const TimingStats sorted = summarize(v);
  CHECK(sorted.median == s.median);
  CHECK(sorted.p99 == s.p99);
}

TEST_CASE("summarize: odd count, one sample, constant samples, none", "[timing]") {
  const TimingStats odd = summarize({3.0, 1.0, 2.0});
  CHECK(odd.median == 2.0);
  CHECK(near(odd.p90, 2.8));

  const TimingStats one = summarize({4.25});
  CHECK(one.samples == 1);
  CHECK(one.min == 4.25);
  CHECK(one.median == 4.25);
  CHECK(one.p99 == 4.25);
  CHECK(one.max == 4.25);
  CHECK(one.cv == 0.0);

  const TimingStats flat = summarize(std::vector<double>(50, 2.5));
  CHECK(flat.cv == 0.0);
  CHECK(flat.p99 == 2.5);

  const TimingStats none = summarize({});
  CHECK(none.samples == 0);
  CHECK(none.median == 0.0);
}

TEST_CASE("summarize: one outlier moves p99 and cv, not the median", "[timing]") {
  std::vector<double> v(99, 10.0);
  v.push_back(1000.0);
  const TimingStats s = summarize(v);
  CHECK(s.median == 10.0);
  CHECK(s.p90 == 10.0);
  CHECK(s.p99 > 10.0);
  CHECK(s.p99 < 1000.0);
  CHECK(s.max == 1000.0);
  CHECK(s.cv > kNoisyCv);
}

TEST_CASE("reps_for_sample: batches reach the minimum sample length", "[timing]") {
  CHECK(reps_for_sample(kMinSampleMicros) == 1);
  CHECK(reps_for_sample(5000.0) == 1);
  CHECK(reps_for_sample(50.0) == 2);
  CHECK(reps_for_sample(99.9) == 2);
  CHECK(reps_for_sample(3.0) == 34);
  for (double us : {0.7, 2.5, 13.0, 77.0}) {
    const int r = reps_for_sample(us);
    CHECK(r * us >= kMinSampleMicros);
    CHECK((r - 1) * us < kMinSampleMicros);
  }
  CHECK(reps_for_sample(0.0) == kMaxReps);
  CHECK(reps_for_sample(1e-6) == kMaxReps);
  CHECK(reps_for_sample(std::nan("")) == kMaxReps);
}

TEST_CASE("count_work: a fused GEMM + bias + ReLU", "[timing]") {
  const Graph g = load(R"({"name": "A", "shape": [64, 80], "dtype": "f16"},
                          {"name": "B", "shape": [80, 96], "dtype": "f16"},
                          {"name": "Bias", "shape": [96], "dtype": "f32"},
                          {"name": "C", "shape": [64, 96], "dtype": "f16"})",
                       R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],
                          "attrs": {"act": "relu"}})",
                       R"("C")");
  const Work w = count_work(g);
  CHECK(w.flops == 2.0 * 64 * 96 * 80 + 2.0 * 64 * 96);
  CHECK(w.bytes == (64 * 80 + 80 * 96 + 64 * 96) * 2.0 + 96 * 4.0);
}

TEST_CASE("count_work: primitives count the same FLOPs; intermediates move no bytes", "[timing]") {
  const Graph g = load(R"({"name": "A", "shape": [64, 80], "dtype": "f16"},
                          {"name": "B", "shape": [80, 96], "dtype": "f16"},
                          {"name": "Bias", "shape": [96], "dtype": "f16"},
                          {"name": "AB", "shape": [64, 96], "dtype": "f32"},
                          {"name": "ABb", "shape": [64, 96], "dtype": "f32"},
                          {"name": "C", "shape": [64, 96], "dtype": "f32"})",
                       R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["AB"]},
                          {"op_type": "BIAS_ADD", "inputs": ["AB", "Bias"], "outputs": ["ABb"]},
                          {"op_type": "RELU", "inputs": ["ABb"], "outputs": ["C"]})",
                       R"("C")");
  const Work w = count_work(g);
  CHECK(w.flops == 2.0 * 64 * 96 * 80 + 2.0 * 64 * 96);
  CHECK(w.bytes == (64 * 80 + 80 * 96 + 96) * 2.0 + 64 * 96 * 4.0);
}

TEST_CASE("count_work: batched products, casts and hoisted ops", "[timing]") {
  Graph g = load(R"({"name": "A", "shape": [4, 32, 16], "dtype": "f16"},
                    {"name": "B", "shape": [16, 8], "dtype": "f16"},
                    {"name": "Bias32", "shape": [8], "dtype": "f32", "constant": true},
                    {"name": "Bias", "shape": [8], "dtype": "f16"},
                    {"name": "AB", "shape": [4, 32, 8], "dtype": "f16"},
                    {"name": "C", "shape": [4, 32, 8], "dtype": "f32"},
                    {"name": "D", "shape": [4, 32, 8], "dtype": "f16"})",
                 R"({"op_type": "CAST", "inputs": ["Bias32"], "outputs": ["Bias"]},
                    {"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["AB"]},
                    {"op_type": "CAST", "inputs": ["AB"], "outputs": ["C"]},
                    {"op_type": "BIAS_ADD", "inputs": ["AB", "Bias"], "outputs": ["D"]})",
                 R"("C", "D")");
  const double out_elems = 4 * 32 * 8;
  const double flops = 2.0 * 4 * 32 * 8 * 16 + out_elems;  // the casts compute nothing
  const double io = 4 * 32 * 16 * 2 + 16 * 8 * 2 + out_elems * 4 + out_elems * 2;
  Work w = count_work(g);
  CHECK(w.flops == flops);
  CHECK(w.bytes == io + 8 * 4);  // the f32 bias is read; its f16 cast is an intermediate

  // Hoisted, the cast runs once before the runs: each run reads its f16 result instead.
  const TensorId bias32 = g.find_tensor("Bias32");
  for (Op& op : g.ops)
    if (op.inputs[0] == bias32) op.hoisted = true;
  w = count_work(g);
  CHECK(w.flops == flops);
  CHECK(w.bytes == io + 8 * 2);
}

TEST_CASE("count_work: GEMM_BIAS_ACT without a bias counts only its activation", "[timing]") {
  const Graph g = load(R"({"name": "A", "shape": [3, 5], "dtype": "f32"},
                          {"name": "B", "shape": [7, 5], "dtype": "f32"},
                          {"name": "C", "shape": [3, 7], "dtype": "f32"})",
                       R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B"], "outputs": ["C"],
                          "attrs": {"act": "gelu", "trans_b": true}})",
                       R"("C")");
  const Work w = count_work(g);
  CHECK(w.flops == 2.0 * 3 * 7 * 5 + 3 * 7);
  CHECK(w.bytes == (15 + 35 + 21) * 4.0);
}

TEST_CASE("time_and_report: statistics, rates, peak, JSON line", "[timing]") {
  const Graph g = load(R"({"name": "x", "shape": [1000], "dtype": "f32"},
                          {"name": "t", "shape": [1000], "dtype": "f32"},
                          {"name": "y", "shape": [1000], "dtype": "f32"})",
                       R"({"op_type": "RELU", "name": "first", "inputs": ["x"], "outputs": ["t"]},
                          {"op_type": "RELU", "name": "second", "inputs": ["t"], "outputs": ["y"]})",
                       R"("y")");
  ScriptedDevice dev;
  static const KernelDef def{};
  Selection sel;
  sel.ops.resize(g.ops.size());
  for (OpChoice& c : sel.ops) c.kernel = &def;
  auto ex = Executor::create(dev, g, sel, plan_buffers(g), 0);
  REQUIRE(ex.ok());

  TimingOptions opts;
  opts.iters = 5;
  opts.warmup_ms = 200;
  std::ostringstream out;

  SECTION("steady samples") {
    dev.whole = {2.0, 2.0, 2.0, 2.0, 2.0};
    REQUIRE(time_and_report(**ex, opts, 100.0, out).ok());
    const std::string text = out.str();
    CHECK(text.find("5 samples of 7 back-to-back iterations, CUDA graph replay") != std::string::npos);
    CHECK(text.find("median 2.000") != std::string::npos);
    CHECK(text.find("warning") == std::string::npos);
    CHECK(dev.runs["first"] == 1);  // the enqueue given to the timer runs the whole graph
    CHECK(dev.runs["second"] == 1);
    CHECK(dev.seen.size() == 1);     // no profile asked for

    const auto at = text.rfind("timing-json: ");
    REQUIRE(at != std::string::npos);
    const std::string line = text.substr(at + 13, text.find('\n', at) - at - 13);
    CHECK(text.find('\n', at) == text.size() - 1);  // the last line
    const auto j = nlohmann::json::parse(line);
    CHECK(j["median_us"].get<double>() == 2.0);
    CHECK(j["reps"].get<int>() == 7);
    CHECK(j["graph_used"].get<bool>());
    CHECK(j["flops"].get<double>() == 2000.0);
    CHECK(j["bytes"].get<double>() == 8000.0);  // x read, y written; t is an intermediate
    CHECK(near(j["tflops"].get<double>(), 2000.0 / 2e-6 / 1e12));
    CHECK(near(j["gbps"].get<double>(), 8000.0 / 2e-6 / 1e9));
    CHECK(near(j["peak_pct"].get<double>(), 100.0 * j["tflops"].get<double>() / 100.0));
  }

  SECTION("noisy samples, no peak, direct launches") {
    opts.cuda_graph = false;
    dev.whole = {1.0, 1.0, 1.0, 1.0, 9.0};
    REQUIRE(time_and_report(**ex, opts, std::nullopt, out).ok());
    const std::string text = out.str();
    CHECK(text.find("direct launches") != std::string::npos);
    CHECK(text.find("warning: the timings are noisy") != std::string::npos);
    CHECK(text.find("peak unknown") != std::string::npos);
    const auto j = nlohmann::json::parse(text.substr(text.rfind("timing-json: ") + 13));
    CHECK(j["peak_pct"].is_null());
    CHECK(j["median_us"].get<double>() == 1.0);
  }

  SECTION("profile: each op alone, without graph replay") {
    opts.profile = true;
    dev.whole = {4.0, 4.0, 4.0, 4.0, 4.0};
    dev.per_op = {1.0, 1.0, 3.0, 3.0, 3.0};
    REQUIRE(time_and_report(**ex, opts, std::nullopt, out).ok());
    REQUIRE(dev.seen.size() == 3);
    CHECK(dev.seen[0].cuda_graph);
    CHECK_FALSE(dev.seen[1].cuda_graph);
    CHECK_FALSE(dev.seen[2].cuda_graph);
    CHECK(dev.runs["first"] == 2);  // once in the whole run, once alone
    CHECK(dev.runs["second"] == 2);
    const std::string text = out.str();
    CHECK(text.find("first") != std::string::npos);
    CHECK(text.find(" 50.0%") != std::string::npos);
    const auto j = nlohmann::json::parse(text.substr(text.rfind("timing-json: ") + 13));
    REQUIRE(j["ops"].size() == 2);
    CHECK(j["ops"][1]["name"] == "second");
    CHECK(j["ops"][1]["median_us"].get<double>() == 3.0);
  }
}

TEST_CASE("time_and_report: a failed or empty timing is an error with context", "[timing]") {
  const Graph g = load(R"({"name": "x", "shape": [4], "dtype": "f32"}, {"name": "y", "shape": [4], "dtype": "f32"})",
                       R"({"op_type": "RELU", "inputs": ["x"], "outputs": ["y"]})", R"("y")");
  ScriptedDevice dev;
  static const KernelDef def{};
  Selection sel;
  sel.ops.resize(1);
  sel.ops[0].kernel = &def;
  auto ex = Executor::create(dev, g, sel, plan_buffers(g), 0);
  REQUIRE(ex.ok());
  TimingOptions opts;
  opts.iters = 3;
  std::ostringstream out;

  SECTION("the device fails") {
    dev.fail = true;
    const Status s = time_and_report(**ex, opts, 50.0, out);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message == "timing: device lost");
    CHECK(out.str().find("timing-json") == std::string::npos);
  }
  SECTION("the device returns no samples") {
    const Status s = time_and_report(**ex, opts, 50.0, out);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("no samples") != std::string::npos);
  }
}

#if GEXEC_HAVE_CPU
TEST_CASE("time_on_host: warm-up by count and duration, batches, samples", "[timing][cpu]") {
  using Clock = std::chrono::steady_clock;
  int calls = 0;
  // About 20 us a run: a sample needs several runs back to back.
  auto enqueue = [&calls]() -> Status {
    ++calls;
    const auto t0 = Clock::now();
    while (Clock::now() - t0 < std::chrono::microseconds(20)) {
    }
    return {};
  };
  TimingInfo info;
  TimingOptions opts;
  opts.iters = 30;
  opts.warmup_iters = 3;
  opts.warmup_ms = 20;
  opts.info = &info;
  const auto t0 = Clock::now();
  auto samples = cpu::time_on_host(enqueue, opts);
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  REQUIRE(samples.ok());
  CHECK(samples->size() == 30);
  CHECK(info.reps >= 1);
  CHECK(info.reps <= 5);  // runs of at least 20 us: at most 5 make 100 us
  CHECK(info.warmup_ms >= 20);
  CHECK(wall_ms >= 20);
  CHECK(calls == info.warmup_iters + 30 * info.reps);
  for (double us : *samples) CHECK(us >= 20);
}

TEST_CASE("time_on_host: errors", "[timing][cpu]") {
  TimingOptions opts;
  opts.iters = 0;
  auto none = cpu::time_on_host([] { return Status(); }, opts);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == Exit::bad_input);

  opts.iters = 10;
  int calls = 0;
  auto failing = cpu::time_on_host(
      [&calls]() -> Status {
        if (++calls == 5) return runtime_error("op 5 failed");
        return {};
      },
      opts);
  REQUIRE_FALSE(failing.ok());
  CHECK(failing.error().message == "op 5 failed");
  CHECK(calls == 5);  // stops at the first failure
}
#else
GEXEC_SKIPPED_TEST("time_on_host: the CPU backend's timer", "[timing][cpu]", GEXEC_NO_CPU_BACKEND)
#endif
