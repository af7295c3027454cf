// Autotuning, the tuning cache and alignment padding on the device: every choice must still
// pass the reference check, and a cache must reload the same choice only on the same device.
#include "catch.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>
#include <string>

#include "../../src/backends/cuda/cublaslt_gemm.hpp"
#include "../../src/backends/cuda/fault.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "gexec/tune/autotune.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/tune/tuning_cache.hpp"
#include "gexec/io/load.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"

using namespace gexec;

namespace {

// A GEMM_BIAS_ACT graph; the bias's dtype and whether it and B are constants (copied or
// converted once rather than every run) can be chosen.
std::string gemm_json(int64_t m, int64_t n, int64_t k, bool trans_b, const std::string& bias_dtype = "f32",
                      bool bias_constant = true, bool b_constant = false) {
  const std::string b = trans_b ? "[" + std::to_string(n) + ", " + std::to_string(k) + "]"
                                : "[" + std::to_string(k) + ", " + std::to_string(n) + "]";
  const auto constant = [](bool c) { return std::string(c ? ", \"constant\": true" : ""); };
  return R"({"format": "gexec.graph", "version": 1, "name": "tuning_test", "tensors": [
    {"name": "A", "shape": [)" + std::to_string(m) + ", " + std::to_string(k) + R"(], "dtype": "f16", "init": {"dist": "normal", "std": 0.25}},
    {"name": "B", "shape": )" + b + R"(, "dtype": "f16", "init": {"dist": "normal", "std": 0.25})" + constant(b_constant) + R"(},
    {"name": "Bias", "shape": [)" + std::to_string(n) + R"(], "dtype": ")" + bias_dtype + R"(", "init": {"dist": "normal", "std": 0.1})" + constant(bias_constant) + R"(},
    {"name": "C", "shape": [)" + std::to_string(m) + ", " + std::to_string(n) + R"(], "dtype": "f16"}],
   "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],
            "attrs": {"act": "relu", "trans_b": )" + (trans_b ? "true" : "false") + R"(}}],
   "outputs": ["C"]})";
}

// An FP8 GEMM_BIAS_ACT graph (e4m3 x e4m3 -> bf16, tensor-wide scales, B stored [N,K] as
// cuBLASLt's TN form reads it), with fast accumulation where asked.
std::string fp8_json(int64_t m, int64_t n, int64_t k, bool fast_accum) {
  return R"({"format": "gexec.graph", "version": 1, "name": "tuning_test", "tensors": [
    {"name": "A", "shape": [)" + std::to_string(m) + ", " + std::to_string(k) + R"(], "dtype": "f8e4m3", "scale": 0.5},
    {"name": "B", "shape": [)" + std::to_string(n) + ", " + std::to_string(k) + R"(], "dtype": "f8e4m3", "scale": 0.125},
    {"name": "Bias", "shape": [)" + std::to_string(n) + R"(], "dtype": "bf16", "init": {"dist": "normal", "std": 0.1}, "constant": true},
    {"name": "C", "shape": [)" + std::to_string(m) + ", " + std::to_string(n) + R"(], "dtype": "bf16"}],
   "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],
            "attrs": {"act": "relu", "trans_b": true, "fast_accum": )" + (fast_accum ? "true" : "false") + R"(}}],
   "outputs": ["C"]})";
}

// The --pad policy make() selects and prepares with (PadEnv sets it for a scope).
PadPolicy g_pad = PadPolicy::automatic;

struct Setup {
  std::unique_ptr<Device> dev;
  Graph graph;
  std::unique_ptr<Executor> ex;
};

// Loads, selects, plans and creates the executor (no passes: the graph is already one op).
std::string make(Setup& s, const std::string& json) {
  auto dev = open_cuda_device(0);
  if (!dev) return dev.error().message;
  s.dev = std::move(*dev);
  auto g = load_graph_text(json, "tuning_test", ".");
  if (!g) return g.error().message;
  s.graph = *g;
  auto sel = select_kernels(s.graph, s.dev->caps(), Backend::cuda, KernelOptions{g_pad});
  if (!sel) return sel.error().message;
  auto ex = Executor::create(*s.dev, s.graph, *sel, plan_buffers(s.graph), 3);
  if (!ex) return ex.error().message;
  s.ex = std::move(*ex);
  return "";
}

// The graph's inputs as the device holds them, for the reference.
Result<std::map<std::string, std::vector<uint8_t>>> read_inputs(Setup& s) {
  std::map<std::string, std::vector<uint8_t>> inputs;
  for (const char* name : {"A", "B", "Bias"}) {
    auto b = s.ex->read(s.graph.find_tensor(name));
    if (!b) return b.error();
    inputs[name] = std::move(*b);
  }
  return inputs;
}

// What the kernels that ran declare (fused or not, padded or not), TF32 as cuBLASLt runs f32.
Precision declared(const Setup& s) {
  Precision p{0x1p-24, true};
  return p.merge(s.ex->precision());
}

// Runs once and compares C with the CPU reference.
std::string check(Setup& s) {
  if (Status st = s.ex->run_checked(); !st) return st.error().message;
  auto in = read_inputs(s);
  if (!in) return in.error().message;
  const auto& inputs = *in;
  auto got = s.ex->read(s.graph.find_tensor("C"));
  if (!got) return got.error().message;
  auto ref = run_reference(s.graph, inputs, {}, declared(s));
  if (!ref) return ref.error().message;
  const Tensor& c = s.graph.tensor(s.graph.find_tensor("C"));
  const OutputCheck chk = compare_output(c, got->data(), ref->at("C"), default_tolerance(c.dtype));
  if (chk.pass) return "";
  return std::to_string(chk.beyond) + " of " + std::to_string(chk.count) + " beyond tolerance, max_abs " +
         std::to_string(chk.max_abs);
}

cuda::CublasLtGemm* gemm_of(Setup& s) { return dynamic_cast<cuda::CublasLtGemm*>(&s.ex->kernel(0)); }

// Tunes s's one kernel afresh (the top 4 candidates, 5 timed runs each), saving the cache at
// path, and checks what every fresh tuning reports. `log` receives autotune's lines.
TunedKernel tune_fresh(Setup& s, const std::string& path, std::string& log) {
  AutotuneOptions o;
  o.tune = true;
  o.top = 4;
  o.iters = 5;
  o.cache_path = path;
  std::ostringstream out;
  auto r = autotune(*s.ex, s.dev->caps(), o, out);
  log = out.str();
  INFO(log);
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  const TunedKernel t = r->front();
  CHECK(t.chosen >= 0);
  CHECK(t.chosen < t.variants);
  CHECK(t.best_us > 0);
  CHECK_FALSE(t.from_cache);
  return t;
}

// Applies the cache at path without tuning and checks that it gave s's kernel the variant `name`.
void reload_cached(Setup& s, const std::string& path, const std::string& name) {
  AutotuneOptions o;
  o.cache_path = path;  // reload only
  std::ostringstream out;
  auto r = autotune(*s.ex, s.dev->caps(), o, out);
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  CHECK(r->front().from_cache);
  CHECK(r->front().chosen_name == name);
}

// --pad for the graphs make() builds in the scope: "0" never, "1" always.
struct PadEnv {
  explicit PadEnv(const char* v) { g_pad = std::string(v) == "0" ? PadPolicy::never : PadPolicy::always; }
  ~PadEnv() { g_pad = PadPolicy::automatic; }
};

}  // namespace

TEST_CASE("padding: forced padding passes the reference check", "[gpu][padding]") {
  PadEnv env("1");
  for (bool trans_b : {false, true}) {
    INFO("trans_b " << trans_b);
    Setup s;
    REQUIRE(make(s, gemm_json(127, 65, 33, trans_b)) == "");
    auto* g = gemm_of(s);
    REQUIRE(g != nullptr);
    INFO(g->padding().why);
    CHECK(g->padding().pad);
    CHECK(check(s) == "");
    // A second run copies the inputs again and gives the same result.
    CHECK(check(s) == "");
  }
}

TEST_CASE("padding: every bias and constant combination passes, fused or not", "[gpu][padding]") {
  PadEnv env("1");
  for (const char* bias_dtype : {"f16", "f32"})
    for (bool bias_constant : {false, true})
      for (bool b_constant : {false, true})
        for (bool refuse : {false, true}) {
          INFO("bias " << bias_dtype << (bias_constant ? " constant" : "") << (b_constant ? ", B constant" : "")
                       << (refuse ? ", epilogue refused" : ""));
          REQUIRE(cuda::fault::configure(refuse ? "epilogue" : "").ok());
          Setup s;
          const std::string made = make(s, gemm_json(61, 67, 35, false, bias_dtype, bias_constant, b_constant));
          REQUIRE(cuda::fault::configure("").ok());
          REQUIRE(made == "");
          auto* g = gemm_of(s);
          REQUIRE(g != nullptr);
          INFO(g->padding().why);
          CHECK(g->padding().pad);
          CHECK(g->fused() != refuse);
          CHECK(check(s) == "");
          CHECK(check(s) == "");
        }
}

TEST_CASE("padding: the estimate pads the large misaligned product, which then passes", "[gpu][padding]") {
  Setup s;
  REQUIRE(make(s, gemm_json(1023, 1025, 1021, false, "f16", true, true)) == "");
  auto* g = gemm_of(s);
  REQUIRE(g != nullptr);
  INFO(g->padding().why);
  CHECK(g->padding().pad);
  CHECK(check(s) == "");
}

TEST_CASE("padding: --pad never leaves a misaligned product unpadded", "[gpu][padding]") {
  PadEnv env("0");
  Setup s;
  REQUIRE(make(s, gemm_json(127, 65, 33, false)) == "");
  REQUIRE(gemm_of(s) != nullptr);
  CHECK_FALSE(gemm_of(s)->padding().pad);
  CHECK(check(s) == "");
}

TEST_CASE("autotune: a rebound GEMM computes on the new buffers, then binds back", "[gpu][autotune]") {
  for (const char* pad : {"0", "1"}) {
    PadEnv env(pad);
    INFO("--pad " << (std::string(pad) == "0" ? "never" : "always"));
    Setup s;
    REQUIRE(make(s, gemm_json(127, 65, 33, false)) == "");
    REQUIRE(s.ex->run_checked().ok());
    auto in = read_inputs(s);
    REQUIRE(in);
    auto& inputs = *in;
    // Copies of A and B and a poisoned C elsewhere; the bias stays where it is.
    const Tensor& c = s.graph.tensor(s.graph.find_tensor("C"));
    Binding other = s.ex->binding_of_kernel(0);
    for (int i : {0, 1}) {
      auto p = s.dev->allocate_arena(int64_t(inputs[i == 0 ? "A" : "B"].size()));
      REQUIRE(p);
      REQUIRE(s.dev->upload(*p, inputs[i == 0 ? "A" : "B"].data(), inputs[i == 0 ? "A" : "B"].size()).ok());
      other.inputs[size_t(i)] = *p;
    }
    auto out = s.dev->allocate_arena(c.bytes());
    REQUIRE(out);
    REQUIRE(s.dev->poison(*out, size_t(c.bytes())).ok());
    other.outputs[0] = *out;
    REQUIRE(s.ex->poison(s.graph.find_tensor("C")).ok());

    REQUIRE(s.ex->kernel(0).tunable()->rebind(other));
    REQUIRE(s.ex->enqueue_op(0).ok());
    REQUIRE(s.dev->synchronize().ok());
    std::vector<uint8_t> got(size_t(c.bytes()));
    REQUIRE(s.dev->download(got.data(), *out, got.size()).ok());
    auto ref = run_reference(s.graph, inputs, {}, declared(s));
    REQUIRE(ref);
    CHECK(compare_output(c, got.data(), ref->at("C"), default_tolerance(c.dtype)).pass);
    // The graph's own C was not written by the rebound run: it still holds the poison.
    auto own = s.ex->read(s.graph.find_tensor("C"));
    REQUIRE(own);
    CHECK_FALSE(compare_output(c, own->data(), ref->at("C"), default_tolerance(c.dtype)).pass);

    REQUIRE(s.ex->kernel(0).tunable()->rebind(s.ex->binding_of_kernel(0)));
    CHECK(check(s) == "");
  }
}

TEST_CASE("autotune: picks a passing candidate; the cache round-trips and is device-bound", "[gpu][autotune]") {
  const std::string path = "gexec_tuning_test_" + std::to_string(::getpid()) + ".json";
  std::remove(path.c_str());
  const std::string json = gemm_json(256, 192, 128, false);
  int chosen = -1;
  std::string name;
  {
    Setup s;
    REQUIRE(make(s, json) == "");
    std::string log;
    const TunedKernel t = tune_fresh(s, path, log);
    INFO(log);
    CHECK(t.best_us <= t.default_us);
    CHECK(s.ex->kernel(0).tunable()->selected_variant() == t.chosen);
    CHECK(check(s) == "");
    chosen = t.chosen;
    name = t.chosen_name;
  }
  {
    Setup s;
    REQUIRE(make(s, json) == "");
    reload_cached(s, path, name);
    CHECK(s.ex->kernel(0).tunable()->variant_name(s.ex->kernel(0).tunable()->selected_variant()) == name);
    (void)chosen;
    CHECK(check(s) == "");
  }
  {
    // The same file claiming another device: ignored, so nothing is applied.
    nlohmann::json j;
    {
      std::ifstream in(path);
      REQUIRE(in);
      j = nlohmann::json::parse(in);
    }
    j["device"] = "Some Other GPU";
    {
      std::ofstream outf(path);
      outf << j.dump();
    }
    Setup s;
    REQUIRE(make(s, json) == "");
    CHECK(load_tuning_cache(path, s.dev->caps()).entries.empty());
    AutotuneOptions o;
    o.cache_path = path;
    std::ostringstream out;
    auto r = autotune(*s.ex, s.dev->caps(), o, out);
    REQUIRE(r);
    CHECK(r->empty());
    CHECK(s.ex->kernel(0).tunable()->selected_variant() == 0);
  }
  std::remove(path.c_str());
}

TEST_CASE("autotune: the FP8 product's candidates pass; the cache keeps an fp8 signature and reloads it", "[gpu][autotune][fp8]") {
  for (bool fast : {false, true}) {
    INFO("fast_accum " << fast);
    const std::string path = "gexec_tuning_fp8_" + std::to_string(::getpid()) + ".json";
    std::remove(path.c_str());
    const std::string json = fp8_json(256, 192, 512, fast);
    std::string name;
    {
      Setup s;
      REQUIRE(make(s, json) == "");
      REQUIRE(s.ex->kernel(0).tunable() != nullptr);  // the FP8 product offers its candidates
      CHECK(s.ex->kernel(0).tunable()->signature().rfind("fp8 ", 0) == 0);
      // Fast accumulation or not, the FP8 tensor cores keep fewer bits than f32 (bound.hpp).
      CHECK(s.ex->precision().accumulate_u == kFp8FastAccumU);
      CHECK(s.ex->precision().accumulate_block == (fast ? 0 : kFp8PromotionBlock));
      std::string log;
      const TunedKernel t = tune_fresh(s, path, log);
      INFO(log);
      CHECK(check(s) == "");
      name = t.chosen_name;
    }
    {
      std::ifstream in(path);
      REQUIRE(in);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      CHECK(text.find("fp8 m=256 n=192 k=512") != std::string::npos);
    }
    Setup s;
    REQUIRE(make(s, json) == "");
    reload_cached(s, path, name);
    CHECK(check(s) == "");
    std::remove(path.c_str());
  }
}
