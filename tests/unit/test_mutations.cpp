// The check, proved: correct kernels over many seeds and graphs never fail it, and seeded
// wrong-result patterns (mutants) are refused through `gexec check` on every graph where they
// change the result by more than the output's own rounding.
// GEXEC_CHECK_SEEDS=N runs N seeds per graph (default: a few, for CI); GEXEC_MUTATION_TABLE=FILE
// writes every measurement (graph, mutant, seed, visible, caught, ratios) as TSV;
// GEXEC_CHECK_BACKEND=cuda runs the graphs on the CUDA backend instead of the CPU one (the H200
// half of the false-failure test: `scripts/gpu_check.sh check`).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "catch.hpp"
#include "temp_dir.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/verify/bound.hpp"
#include "model_kernel.hpp"
#include "process.hpp"
#include "skip.hpp"

using namespace gexec;
using namespace gexec::test;
// The correct runs take the CPU backend unless GEXEC_CHECK_BACKEND names another.
#if GEXEC_HAVE_CPU

namespace fs = std::filesystem;

namespace {

using Arrays = std::map<std::string, std::vector<float>>;

#if defined(__SANITIZE_ADDRESS__)
#define GEXEC_MUT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GEXEC_MUT_ASAN 1
#endif
#endif

// CI: a few seeds (one under ASan, where everything runs several times slower).
#ifdef GEXEC_MUT_ASAN
constexpr int kDefaultSeeds = 1;
#else
constexpr int kDefaultSeeds = 3;
#endif

int seeds_from_env(int fallback) {
  const char* s = std::getenv("GEXEC_CHECK_SEEDS");
  return s && std::atoi(s) > 0 ? std::atoi(s) : fallback;
}

// A folder of the process's own, removed when the tests end.
fs::path scratch(const std::string& name) {
  static const gexec::test::TempDir root("mut");
  fs::path p = root.path / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// The test graphs: the examples, and products with large K.
std::string gemm_json(const std::string& name, const std::string& dt, int m, int n, int k, bool bias,
                      const std::string& act) {
  std::ostringstream s;
  s << R"({"format": "gexec.graph", "version": 1, "name": ")" << name << R"(", "tensors": [)"
    << R"({"name": "A", "shape": [)" << m << "," << k << R"(], "dtype": ")" << dt
    << R"(", "init": {"dist": "normal", "std": 0.5}},)"
    << R"({"name": "B", "shape": [)" << k << "," << n << R"(], "dtype": ")" << dt
    << R"(", "init": {"dist": "normal", "std": 0.5}},)";
  if (bias) s << R"({"name": "Bias", "shape": [)" << n << R"(], "dtype": "f32", "init": {"dist": "normal", "std": 1}},)";
  s << R"({"name": "C", "shape": [)" << m << "," << n << R"(], "dtype": ")" << dt << R"("}], "ops": [)"
    << R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B")" << (bias ? R"(, "Bias")" : "")
    << R"(], "outputs": ["C"], "attrs": {"act": ")" << act << R"("}}], "outputs": ["C"]})";
  return s.str();
}

std::vector<fs::path> test_graphs() {
  std::vector<fs::path> out;
  for (const char* g : {"gemm_bias_relu", "gemm_bias_relu_primitives", "mlp3", "gemm_bias_gelu_bf16", "gemm_f32",
                        "batched_matmul", "batched_shared_b", "transposed"})
    out.push_back(source_path(std::string("graphs/") + g + ".json"));
  const fs::path dir = scratch("graphs");
  const std::vector<std::pair<std::string, std::string>> generated = {
      {"f16_k4096_bias_relu", gemm_json("f16_k4096_bias_relu", "f16", 48, 64, 4096, true, "relu")},
      {"bf16_k2048", gemm_json("bf16_k2048", "bf16", 32, 48, 2048, false, "none")},
      {"f32_k1024_bias", gemm_json("f32_k1024_bias", "f32", 32, 32, 1024, true, "none")},
  };
  for (const auto& [name, text] : generated) {
    std::ofstream(dir / (name + ".json")) << text;
    out.push_back(dir / (name + ".json"));
  }
  return out;
}

Arrays read_dir(const fs::path& dir, const Graph& g, bool inputs) {
  Arrays a;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const bool is_in = idx.is_input(TensorId(t));
    const bool is_out = std::find(g.outputs.begin(), g.outputs.end(), TensorId(t)) != g.outputs.end();
    if (inputs ? !is_in : !is_out) continue;
    auto npy = read_npy((dir / (g.tensors[t].name + ".npy")).string());
    REQUIRE(npy);
    a[g.tensors[t].name] = std::vector<float>(npy->values.begin(), npy->values.end());
  }
  return a;
}

void write_outputs(const fs::path& dir, const Graph& g, const Arrays& vals) {
  fs::create_directories(dir);
  for (TensorId id : g.outputs) {
    const Tensor& t = g.tensor(id);
    const std::vector<float>& v = vals.at(t.name);
    const std::string path = (dir / (t.name + ".npy")).string();
    if (t.dtype == DType::f16) {
      std::vector<uint16_t> bits(v.size());
      for (size_t i = 0; i < v.size(); ++i) bits[i] = float_to_f16(v[i]);
      REQUIRE(write_npy_f16(path, t.shape, bits.data()));
    } else {
      REQUIRE(write_npy_f32(path, t.shape, v.data()));
    }
  }
}

struct Checked {
  int exit = -1;
  double max_ratio = 0, norm_ratio = 0;  // of the first output
  std::string text;
};

// Runs `command` (check_command or run_command) with `o`: its exit status and text into `c`, and
// the report it wrote at o.report_path (discarded where there is none).
template <class Command, class Options>
nlohmann::json run_into(Checked& c, Command command, const Options& o) {
  std::ostringstream out, err;
  c.exit = int(command(o, out, err));
  c.text = out.str() + err.str();
  std::ifstream f(o.report_path);
  return nlohmann::json::parse(f, nullptr, false);
}

Checked run_check(const fs::path& graph, const fs::path& inputs, const fs::path& outputs, bool tf32 = false) {
  CheckOptions o;
  o.graph_path = graph.string();
  o.inputs_dir = inputs.string();
  o.outputs_dir = outputs.string();
  o.precision = tf32 ? "tf32" : "f32";
  o.report_path = (outputs / "report.json").string();
  Checked c;
  const auto rep = run_into(c, check_command, o);
  if (!rep.is_discarded() && rep.contains("check") && !rep["check"]["outputs"].empty()) {
    const auto& first = rep["check"]["outputs"][0];
    c.max_ratio = first["max_ratio"].is_number() ? first["max_ratio"].get<double>() : INFINITY;
    c.norm_ratio = first["norm_ratio"].is_number() ? first["norm_ratio"].get<double>() : INFINITY;
  }
  return c;
}

// The correct outputs of gexec's CPU backend for one seed, with the inputs, dumped to `dir`.
Checked run_cpu(const fs::path& graph, uint64_t seed, const fs::path& dir) {
  RunOptions o;
  o.graph_path = graph.string();
  const char* backend = std::getenv("GEXEC_CHECK_BACKEND");
  o.backend = backend ? backend : "cpu";
  o.seed = seed;
  o.dump_dir = dir.string();
  o.report_path = (dir / "run.json").string();
  Checked c;
  const auto rep = run_into(c, run_command, o);
  for (const auto& o2 : rep["check"]["outputs"]) {
    c.max_ratio = std::max(c.max_ratio, o2["max_ratio"].get<double>());
    c.norm_ratio = std::max(c.norm_ratio, o2["norm_ratio"].get<double>());
  }
  return c;
}

std::ofstream* table() {
  static std::ofstream* t = [] {
    const char* p = std::getenv("GEXEC_MUTATION_TABLE");
    if (!p) return static_cast<std::ofstream*>(nullptr);
    auto* f = new std::ofstream(p);
    *f << "graph\tkind\tseed\tvisible\tcaught\tmax_ratio\tnorm_ratio\n";
    return f;
  }();
  return t;
}

void record(const std::string& graph, const std::string& kind, uint64_t seed, bool visible, bool caught,
            const Checked& c) {
  if (std::ofstream* t = table())
    *t << graph << "\t" << kind << "\t" << seed << "\t" << visible << "\t" << caught << "\t" << c.max_ratio << "\t"
       << c.norm_ratio << "\n" << std::flush;
}

// Output-level patterns on the first output [..., M, N] (logical order).
struct Dims {
  int64_t batch = 1, m = 1, n = 1;
};
Dims dims_of(const Tensor& t) {
  Dims d;
  d.n = t.shape.back();
  d.m = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
  d.batch = t.numel() / (d.m * d.n);
  return d;
}

// A tile (at most 16 x 16) of batch entry 0 at a seeded place: its element indexes.
std::vector<size_t> tile(const Dims& d, std::mt19937_64& rng, int64_t* r0_out = nullptr, int64_t* c0_out = nullptr) {
  const int64_t th = std::min<int64_t>(16, d.m), tw = std::min<int64_t>(16, d.n);
  const int64_t r0 = std::uniform_int_distribution<int64_t>(0, d.m / th - 1)(rng) * th;
  const int64_t c0 = std::uniform_int_distribution<int64_t>(0, d.n / tw - 1)(rng) * tw;
  if (r0_out) *r0_out = r0;
  if (c0_out) *c0_out = c0;
  std::vector<size_t> idx;
  for (int64_t r = r0; r < r0 + th; ++r)
    for (int64_t c = c0; c < c0 + tw; ++c) idx.push_back(size_t(r * d.n + c));
  return idx;
}

// Whether a mutant changes some element by more than one rounding step of the output dtype.
bool visible(DType dt, const std::vector<float>& cor, const std::vector<float>& mut) {
  for (size_t i = 0; i < cor.size(); ++i)
    if (std::fabs(double(mut[i]) - double(cor[i])) > ulp_of(dt, cor[i])) return true;
  return false;
}

}  // namespace

TEST_CASE("check: correct kernels pass over many seeds and every graph; mutants are refused", "[check][mutation][cpu]") {
  const int seeds = seeds_from_env(kDefaultSeeds);
  int correct_runs = 0, false_failures = 0, mutants = 0, visible_mutants = 0, missed = 0;
  double worst_elem = 0, worst_norm = 0;
  for (const fs::path& graph_path : test_graphs()) {
    auto loaded = load_graph_file(graph_path.string());
    REQUIRE(loaded);
    const Graph& g = *loaded;
    const Tensor& out0 = g.tensor(g.outputs[0]);
    const Dims d = dims_of(out0);
    const std::string gname = g.name;
    Arrays stale;  // the previous seed's outputs: what a stale tile holds
    for (int s = -1; s < seeds; ++s) {
      const uint64_t seed = uint64_t(s + 1) * 7919 + 11;
      const fs::path dir = scratch(gname + "/" + std::to_string(seed));
      // A check of correct outputs: it passes, and its ratios count towards the worst seen.
      const auto correct = [&](const Checked& c, const std::string& kind) {
        ++correct_runs;
        if (c.exit != 0) ++false_failures;
        CHECK(c.exit == 0);
        worst_elem = std::max(worst_elem, c.max_ratio), worst_norm = std::max(worst_norm, c.norm_ratio);
        record(gname, kind, seed, false, c.exit != 0, c);
      };
      // gexec's CPU backend, checked by `run`.
      const Checked cpu = run_cpu(graph_path, seed, dir / "run");
      INFO(gname << " seed " << seed << ": " << cpu.text);
      correct(cpu, std::string("correct:") + (std::getenv("GEXEC_CHECK_BACKEND") ? std::getenv("GEXEC_CHECK_BACKEND") : "cpu") + "-backend");
      // The plain f32 model kernel (unfused, sequential sums), checked by `gexec check`.
      const Arrays inputs = read_dir(dir / "run", g, true);
      const Arrays cor = run_model(g, inputs);
      write_outputs(dir / "model", g, cor);
      const Checked model = run_check(graph_path, dir / "run", dir / "model");
      INFO(model.text);
      correct(model, "correct:model");
      // TF32 products where the graph has f32 operands, checked with --precision tf32.
      bool has_f32_operand = false;
      for (const Op& op : g.ops)
        if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT)
          has_f32_operand |= g.tensor(op.inputs[0]).dtype == DType::f32 || g.tensor(op.inputs[1]).dtype == DType::f32;
      if (has_f32_operand) {
        write_outputs(dir / "tf32", g, run_model(g, inputs, {Fault::none, 1.0, true}));
        const Checked t = run_check(graph_path, dir / "run", dir / "tf32", true);
        INFO(t.text);
        correct(t, "correct:model-tf32");
      }
      if (s < 0) {
        stale = cor;
        continue;
      }

      // The mutants of the first output.
      std::mt19937_64 rng(seed);
      std::vector<std::pair<std::string, std::vector<float>>> muts;
      const std::vector<float>& c0 = cor.at(out0.name);
      muts.push_back({"dropped K term", run_model(g, inputs, {Fault::drop_k}).at(out0.name)});
      muts.push_back({"relative 2^-8", run_model(g, inputs, {Fault::scale_output, 1.0 + 0x1p-8}).at(out0.name)});
      muts.push_back({"relative 2^-10", run_model(g, inputs, {Fault::scale_output, 1.0 + 0x1p-10}).at(out0.name)});
      if (has_bias_after_product(g))
        muts.push_back({"bias on the wrong column", run_model(g, inputs, {Fault::bias_wrong_column}).at(out0.name)});
      muts.push_back({"accumulation in the output dtype",
                      run_model(g, inputs, {Fault::acc_in_output_dtype}).at(out0.name)});
      {
        std::vector<float> m = c0;
        for (size_t i : tile(d, rng)) m[i] = stale.at(out0.name)[i];
        muts.push_back({"stale tile", m});
      }
      if (d.m / std::min<int64_t>(16, d.m) * (d.n / std::min<int64_t>(16, d.n)) >= 2) {
        std::vector<float> m = c0;
        std::vector<size_t> a, b;
        do {
          a = tile(d, rng), b = tile(d, rng);
        } while (a == b);
        for (size_t q = 0; q < a.size(); ++q) std::swap(m[a[q]], m[b[q]]);
        muts.push_back({"shuffled tile", m});
      }
      {
        double ss = 0;
        for (float v : c0) ss += double(v) * v;
        const double rms = std::sqrt(ss / double(c0.size()));
        std::vector<size_t> typical;
        for (size_t i = 0; i < c0.size(); ++i)
          if (std::fabs(c0[i]) <= rms) typical.push_back(i);
        std::vector<float> m = c0;
        const size_t i = typical[std::uniform_int_distribution<size_t>(0, typical.size() - 1)(rng)];
        m[i] = test::round_dtype(out0.dtype, float(c0[i] + 0.01 * rms));
        muts.push_back({"one element off by 1% of rms", m});
      }
      {
        std::vector<float> m = c0;
        for (int64_t e = 0; e < d.batch; ++e)
          for (int64_t p = 0; p < d.m * d.n; ++p) m[size_t(e * d.m * d.n + p)] = c0[size_t(e * d.m * d.n + (p % d.m) * d.n + p / d.m)];
        muts.push_back({"transposed store", m});
      }

      for (auto& [kind, values] : muts) {
        Arrays all = cor;
        all[out0.name] = values;
        const fs::path mdir = dir / ("mut" + std::to_string(mutants));
        write_outputs(mdir, g, all);
        const Checked c = run_check(graph_path, dir / "run", mdir);
        const double u = unit_roundoff(out0.dtype);
        const bool vis = kind == "relative 2^-8"    ? 0x1p-8 > u
                         : kind == "relative 2^-10" ? 0x1p-10 > u
                                                    : visible(out0.dtype, c0, values);
        ++mutants;
        visible_mutants += vis;
        record(gname, kind, seed, vis, c.exit == 1, c);
        INFO(gname << " seed " << seed << ", " << kind << ": exit " << c.exit << ", ratios " << c.max_ratio << " / "
                   << c.norm_ratio << "\n" << c.text);
        CHECK((c.exit == 1 || c.exit == 0));
        if (vis) {
          if (c.exit != 1) ++missed;
          CHECK(c.exit == 1);
        }
      }
    }
  }
  std::cout << "check suite: " << correct_runs << " correct runs, " << false_failures << " false failures (worst ratios "
            << worst_elem << " per element, " << worst_norm << " normwise); " << mutants << " mutants, "
            << visible_mutants << " visible, " << missed << " missed\n";
  CHECK(false_failures == 0);
  CHECK(missed == 0);
  CHECK(visible_mutants > 0);
}
// The mutants at sizes the model kernel cannot run, for the H200 (scripts/gpu_check.sh
// fullcheck): GEXEC_MUTATION_SIZES=4096,8192 with GEXEC_CHECK_BACKEND=cuda. Per size, one f16
// GEMM + f32 bias of S x S x S, run twice (two seeds) with the default options, both runs passing;
// then the mutants of the first run's output, each checked by `gexec check` with its default
// options. They are derived from the output and the inputs: a dropped K term (C - a_k b_k) and a
// bias on the wrong column (C - bias_j + bias_j+1) exactly, the relative errors, a stale tile (the
// second seed's values) and a shuffled tile of 64 x 64 at places no kernel tile starts, one
// element off by 1% of the rms, a transposed store. An accumulation in the output dtype needs a
// product recomputed on the CPU and is left out.
TEST_CASE("check: large products with the default options refuse every mutant", "[.][mutation-large]") {
  const char* env = std::getenv("GEXEC_MUTATION_SIZES");
  std::vector<int64_t> sizes;
  for (std::stringstream in(env ? env : "4096"); in.good();) {
    std::string item;
    std::getline(in, item, ',');
    if (std::atoll(item.c_str()) >= 128) sizes.push_back(std::atoll(item.c_str()));
  }
  REQUIRE(!sizes.empty());
  int correct_runs = 0, mutants = 0, visible_mutants = 0, missed = 0;
  for (int64_t s : sizes) {
    const std::string name = "large_" + std::to_string(s);
    const fs::path gdir = scratch(name);
    const fs::path graph_path = gdir / (name + ".json");
    std::ofstream(graph_path) << gemm_json(name, "f16", int(s), int(s), int(s), true, "none");
    auto loaded = load_graph_file(graph_path.string());
    REQUIRE(loaded);
    const Graph& g = *loaded;
    const Tensor& out0 = g.tensor(g.outputs[0]);
    Arrays outs[2];
    for (int r = 0; r < 2; ++r) {
      const fs::path dir = gdir / ("seed" + std::to_string(r));
      const Checked c = run_cpu(graph_path, uint64_t(r + 1), dir);
      INFO(name << " seed " << r + 1 << ": " << c.text);
      CHECK(c.exit == 0);
      ++correct_runs;
      record(name, "correct:" + std::string(std::getenv("GEXEC_CHECK_BACKEND") ? std::getenv("GEXEC_CHECK_BACKEND") : "cpu") +
                       "-backend", uint64_t(r + 1), false, c.exit != 0, c);
      std::ifstream f(dir / "run.json");
      const auto rep = nlohmann::json::parse(f, nullptr, false);
      if (rep.is_object() && rep.contains("times_ms"))
        std::cout << name << " seed " << r + 1 << ": check " << rep["times_ms"]["check"] << " ms by "
                  << rep["check"]["outputs"][0]["checked_by"] << ", ratios " << c.max_ratio << " / " << c.norm_ratio
                  << "\n";
      outs[r] = read_dir(dir, g, false);
    }
    const Arrays inputs = read_dir(gdir / "seed0", g, true);
    const std::vector<float>& c0 = outs[0].at(out0.name);
    const std::vector<float>& a = inputs.at("A");
    const std::vector<float>& b = inputs.at("B");
    const std::vector<float>& bias = inputs.at("Bias");
    std::mt19937_64 rng{uint64_t(s)};
    const auto round = [&](double v) { return test::round_dtype(out0.dtype, float(v)); };
    std::vector<std::pair<std::string, std::vector<float>>> muts;
    {
      const int64_t k0 = std::uniform_int_distribution<int64_t>(0, s - 1)(rng);
      std::vector<float> m(c0.size());
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j)
          m[size_t(i * s + j)] = round(double(c0[size_t(i * s + j)]) - double(a[size_t(i * s + k0)]) * b[size_t(k0 * s + j)]);
      muts.push_back({"dropped K term", m});
    }
    for (double r : {0x1p-8, 0x1p-10}) {
      std::vector<float> m(c0.size());
      for (size_t i = 0; i < c0.size(); ++i) m[i] = round(double(c0[i]) * (1 + r));
      muts.push_back({r == 0x1p-8 ? "relative 2^-8" : "relative 2^-10", m});
    }
    {
      std::vector<float> m(c0.size());
      for (size_t i = 0; i < c0.size(); ++i) {
        const size_t j = i % size_t(s);
        m[i] = round(double(c0[i]) - bias[j] + bias[(j + 1) % size_t(s)]);
      }
      muts.push_back({"bias on the wrong column", m});
    }
    // 64 x 64 tiles at places no kernel tile starts.
    auto place = [&] {
      return std::pair{std::uniform_int_distribution<int64_t>(1, s - 65)(rng), std::uniform_int_distribution<int64_t>(1, s - 65)(rng)};
    };
    {
      std::vector<float> m = c0;
      const auto [r0, q0] = place();
      for (int64_t r = r0; r < r0 + 64; ++r)
        for (int64_t q = q0; q < q0 + 64; ++q) m[size_t(r * s + q)] = outs[1].at(out0.name)[size_t(r * s + q)];
      muts.push_back({"stale tile", m});
    }
    {
      std::vector<float> m = c0;
      auto [r0, q0] = place();
      auto [r1, q1] = place();
      while (std::abs(r1 - r0) < 64 && std::abs(q1 - q0) < 64) std::tie(r1, q1) = place();
      for (int64_t r = 0; r < 64; ++r)
        for (int64_t q = 0; q < 64; ++q) std::swap(m[size_t((r0 + r) * s + q0 + q)], m[size_t((r1 + r) * s + q1 + q)]);
      muts.push_back({"shuffled tile", m});
    }
    {
      double ss = 0;
      for (float v : c0) ss += double(v) * v;
      const double rms = std::sqrt(ss / double(c0.size()));
      std::vector<float> m = c0;
      size_t i = size_t(std::uniform_int_distribution<int64_t>(0, s * s - 1)(rng));
      while (std::fabs(c0[i]) > rms) i = (i + 1) % c0.size();
      m[i] = round(c0[i] + 0.01 * rms);
      muts.push_back({"one element off by 1% of rms", m});
    }
    {
      std::vector<float> m(c0.size());
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j) m[size_t(i * s + j)] = c0[size_t(j * s + i)];
      muts.push_back({"transposed store", m});
    }
    for (auto& [kind, values] : muts) {
      Arrays all = outs[0];
      all[out0.name] = std::move(values);
      const fs::path mdir = gdir / "mutant";
      fs::remove_all(mdir);
      write_outputs(mdir, g, all);
      const Checked c = run_check(graph_path, gdir / "seed0", mdir);
      const double u = unit_roundoff(out0.dtype);
      const bool vis = kind == "relative 2^-8"    ? 0x1p-8 > u
                       : kind == "relative 2^-10" ? 0x1p-10 > u
                                                  : visible(out0.dtype, c0, all.at(out0.name));
      ++mutants;
      visible_mutants += vis;
      record(name, kind, 1, vis, c.exit == 1, c);
      std::cout << name << " " << kind << ": exit " << c.exit << ", ratios " << c.max_ratio << " / " << c.norm_ratio
                << (vis ? "" : " (not visible)") << "\n";
      INFO(name << ", " << kind << ": exit " << c.exit << "\n" << c.text);
      CHECK((c.exit == 1 || c.exit == 0));
      if (vis) {
        if (c.exit != 1) ++missed;
        CHECK(c.exit == 1);
      }
    }
    fs::remove_all(gdir);
  }
  std::cout << "large check suite: " << correct_runs << " correct runs; " << mutants << " mutants, " << visible_mutants
            << " visible, " << missed << " missed\n";
  CHECK(missed == 0);
}
#else
GEXEC_SKIPPED_TEST("check: correct kernels pass and mutants are refused", "[check][mutation][cpu]", GEXEC_NO_CPU_BACKEND)
#endif  // GEXEC_HAVE_CPU
