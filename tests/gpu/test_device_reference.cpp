// The float64 reference on the device: the same reference as the CPU's (values, magnitudes and
// variances) on every graph of graphs/ and on products of every kind (bias, activation, residual,
// f16, bf16, f32 with TF32, f8 with tensor, row and column scales and the blocked FP8
// accumulator, batched, transposed, column-major, carried variances), in one panel and in many;
// its memory planned and refused with the figures; and wrong results refused at 4096^3 with the
// default options.
#include "catch.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../example_graphs.hpp"
#include "../unit/process.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/ir/real_value.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "gexec/verify/reference_cost.hpp"
#include "../unit/graph_builder.hpp"

using namespace gexec;
namespace fs = std::filesystem;

namespace {

using Bytes = std::map<std::string, std::vector<uint8_t>>;

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("gexec_devref_" + std::to_string(getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

using test::inputs_of;

// Products of every kind the reference meets, as graph files.
std::vector<std::pair<std::string, std::string>> product_graphs() {
  const std::string head = R"({"format": "gexec.graph", "version": 1, "name": ")";
  return {
      {"residual_gelu", head + R"(residual_gelu", "tensors": [
        {"name": "A", "shape": [96, 160], "dtype": "f16"},
        {"name": "B", "shape": [72, 160], "dtype": "f16"},
        {"name": "Bias", "shape": [72], "dtype": "f32"},
        {"name": "R", "shape": [96, 72], "dtype": "f32"},
        {"name": "C", "shape": [96, 72], "dtype": "f16"}],
       "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias", "R"], "outputs": ["C"],
                "attrs": {"act": "gelu", "trans_b": true, "residual": true, "beta": 0.5, "alpha": 0.75}}],
       "outputs": ["C"]})"},
      {"colmajor_bf16", head + R"(colmajor_bf16", "tensors": [
        {"name": "A", "shape": [80, 48], "dtype": "bf16", "layout": "colmajor"},
        {"name": "B", "shape": [48, 64], "dtype": "bf16", "layout": "colmajor"},
        {"name": "C", "shape": [80, 64], "dtype": "f32"}],
       "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"alpha": -1.5}}],
       "outputs": ["C"]})"},
      {"batched_trans_shared", head + R"(batched_trans_shared", "tensors": [
        {"name": "A", "shape": [3, 24, 40], "dtype": "f32"},
        {"name": "B", "shape": [24, 56], "dtype": "f32"},
        {"name": "C", "shape": [3, 40, 56], "dtype": "f32"}],
       "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"trans_a": true}}],
       "outputs": ["C"]})"},
      {"batched_both", head + R"(batched_both", "tensors": [
        {"name": "A", "shape": [4, 33, 70], "dtype": "bf16"},
        {"name": "B", "shape": [4, 50, 70], "dtype": "bf16"},
        {"name": "C", "shape": [4, 33, 50], "dtype": "bf16"}],
       "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"trans_b": true}}],
       "outputs": ["C"]})"},
      {"f8_axis_scales", head + R"(f8_axis_scales", "tensors": [
        {"name": "A", "shape": [4, 300], "dtype": "f8e4m3", "scale": {"axis": 0, "values": [0.5, 0.25, 0.1, 3]}},
        {"name": "B", "shape": [300, 3], "dtype": "f8e5m2", "scale": {"axis": 1, "values": [0.03, 2, 0.7]}},
        {"name": "Bias", "shape": [3], "dtype": "bf16"},
        {"name": "C", "shape": [4, 3], "dtype": "bf16"}],
       "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"], "attrs": {"act": "relu"}}],
       "outputs": ["C"]})"},
      {"f8_out_amax", head + R"(f8_out_amax", "tensors": [
        {"name": "A", "shape": [64, 256], "dtype": "f8e4m3", "scale": 0.125},
        {"name": "B", "shape": [256, 48], "dtype": "f8e4m3", "scale": 0.0625, "layout": "colmajor"},
        {"name": "C", "shape": [64, 48], "dtype": "f8e4m3", "scale": 0.5},
        {"name": "Amax", "shape": [1], "dtype": "f32"}],
       "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C", "Amax"]}],
       "outputs": ["C", "Amax"]})"},
      {"carried_chain", head + R"(carried_chain", "tensors": [
        {"name": "X", "shape": [64, 96], "dtype": "f32"},
        {"name": "W1", "shape": [96, 128], "dtype": "f32"},
        {"name": "H", "shape": [64, 128], "dtype": "f32"},
        {"name": "H16", "shape": [64, 128], "dtype": "f16"},
        {"name": "W2", "shape": [128, 40], "dtype": "f16"},
        {"name": "Y", "shape": [64, 40], "dtype": "f16"}],
       "ops": [{"op_type": "MATMUL", "inputs": ["X", "W1"], "outputs": ["H"]},
               {"op_type": "CAST", "inputs": ["H"], "outputs": ["H16"]},
               {"op_type": "MATMUL", "inputs": ["H16", "W2"], "outputs": ["Y"]}],
       "outputs": ["Y", "H"]})"},
  };
}

// Every graph to compare on: graphs/ and the products above.
std::vector<std::string> all_graphs() {
  std::vector<std::string> paths;
  for (const std::string& path : test::example_graphs()) {
    // (The device's widening reads no block scales: the check keeps such graphs on the CPU.)
    if (test::uses_block_scales(path))
      WARN("skipped " << path << ": block scales, checked against the CPU reference");
    else paths.push_back(path);
  }
  const fs::path dir = scratch("graphs");
  for (const auto& [name, text] : product_graphs()) {
    std::ofstream(dir / (name + ".json")) << text;
    paths.push_back((dir / (name + ".json")).string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}


// The two references, element by element: values the same or within one step of the output
// dtype (two float64 sums in different orders round the same, except a hair from a rounding
// boundary) and far inside the check's bound; magnitudes and variances the same to float64
// rounding, but for the rare element whose carried rounding moved with such a step.
struct Agreement {
  int64_t elements = 0, same = 0, value_steps = 0, var_off = 0;
  double worst_scale = 0;  // the largest relative difference of the magnitudes
};

void compare(const Tensor& t, const RefTensor& cpu, const RefTensor& dev, Agreement& a) {
  REQUIRE(cpu.value.size() == dev.value.size());
  for (size_t i = 0; i < cpu.value.size(); ++i) {
    ++a.elements;
    const double c = cpu.value[i], d = dev.value[i];
    const bool same = (std::isnan(c) && std::isnan(d)) || c == d;
    if (same && cpu.scale[i] == dev.scale[i] && cpu.var[i] == dev.var[i]) {
      ++a.same;
      continue;
    }
    if (!same) {
      INFO(t.name << " element " << i << ": CPU " << c << ", device " << d);
      REQUIRE(std::isfinite(c));
      CHECK(std::fabs(c - d) <= ulp_of(t.dtype, c) * 1.0001);
      ++a.value_steps;
    }
    if (std::isfinite(cpu.scale[i]) && cpu.scale[i] > 0)
      a.worst_scale = std::max(a.worst_scale, std::fabs(cpu.scale[i] - dev.scale[i]) / cpu.scale[i]);
    const double v = std::max(cpu.var[i], dev.var[i]);
    if (v > 0 && std::fabs(cpu.var[i] - dev.var[i]) > 1e-9 * v) ++a.var_off;
  }
}

}  // namespace

TEST_CASE("device reference: agrees with the CPU reference on every graph, in one panel and in many",
          "[gpu][device-reference]") {
  for (int64_t panel : {int64_t(0), int64_t(64) << 10}) {
    auto engine = open_cuda_product_engine(0, panel);
    REQUIRE(engine);
    for (const std::string& path : all_graphs()) {
      auto loaded = load_graph_file(path);
      INFO(path);
      REQUIRE(loaded);
      const Graph& g = *loaded;
      std::vector<Precision> precs(2);
      precs[1].tf32 = true;
      if (has_f8_product(g)) precs.push_back(fp8_tensor_core_precision(false)), precs.push_back(fp8_tensor_core_precision(true));
      for (size_t p = 0; p < precs.size(); ++p)
        for (uint64_t seed : {1, 2}) {
          INFO("precision " << p << ", seed " << seed << ", panel bytes " << panel);
          const Bytes in = inputs_of(g, seed);
          auto cpu = run_reference(g, in, {}, precs[p]);
          REQUIRE(cpu);
          auto dev = run_reference(g, in, {}, precs[p], engine->get());
          INFO((dev ? std::string() : dev.error().message));
          REQUIRE(dev);
          Agreement a;
          for (TensorId id : g.outputs) compare(g.tensor(id), cpu->at(g.tensor(id).name), dev->at(g.tensor(id).name), a);
          UNSCOPED_INFO(fs::path(path).stem().string() << ": " << a.same << " of " << a.elements
                                                     << " elements bit for bit, " << a.value_steps << " a step apart, "
                                                     << a.var_off << " variances off, magnitudes within "
                                                     << a.worst_scale);
          CHECK(a.value_steps <= a.elements / 1000 + 2);
          CHECK(a.var_off <= a.elements / 1000 + 2);
          CHECK(a.worst_scale < 1e-12);
        }
    }
  }
}

TEST_CASE("device reference: the cross-checked engine passes correct runs, and says so", "[gpu][device-reference]") {
  const fs::path dir = scratch("runs");
  for (const char* graph : {"graphs/gemm_bias_relu.json", "graphs/mlp3.json", "graphs/fp8_rowwise.json",
                            "graphs/batched_shared_b.json", "graphs/transposed.json"}) {
    INFO(graph);
    const auto r = test::run_gexec("run --backend cuda " + test::source_path(graph) + " --report " +
                                   (dir / "r.json").string());
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(test::has(r.output, "summed in float64 on CUDA device 0"));
    std::ifstream f(dir / "r.json");
    const auto rep = nlohmann::json::parse(f, nullptr, false);
    REQUIRE(rep.is_object());
    CHECK(rep["check"]["mode"] == "full");
    CHECK(rep["check"]["reference"] == "device");
    for (const auto& o : rep["check"]["outputs"]) {
      CHECK(o["reference"] == "device");
      CHECK(o["cross_checked"].get<int64_t>() > 0);
    }
  }
  // The run's inputs are read where it left them on the device, not uploaded again.
  const auto r = test::run_gexec("-v run --backend cuda " + test::source_path("graphs/gemm_bias_relu.json"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(test::has(r.output, "(2 of 2 read where the run left them)"));
}

TEST_CASE("device reference: memory planned, refused with the figures, and the CPU taking over",
          "[gpu][device-reference]") {
  auto engine = open_cuda_product_engine(0);
  REQUIRE(engine);
  ProductKind huge;
  huge.shape.m = huge.shape.n = huge.shape.k = int64_t(1) << 20;  // 8 TiB per operand in float64
  const std::string why = (*engine)->refusal(huge);
  INFO(why);
  CHECK(test::has(why, "the float64 reference needs "));
  CHECK(test::has(why, "GiB free of"));
  ProductKind small;
  small.shape.m = small.shape.n = small.shape.k = 256;
  CHECK((*engine)->refusal(small).empty());

  // An allocation failing as the engine prepares: the product is summed on the CPU, with a note.
  auto loaded = load_graph_file(test::source_path("graphs/gemm_bias_relu.json"));
  REQUIRE(loaded);
  const Bytes in = inputs_of(*loaded, 4);
  REQUIRE(configure_cuda_faults("alloc:1").ok());
  CrossCheckedEngine checked(**engine, 512, 1);
  auto r = run_reference(*loaded, in, {}, {}, &checked);
  REQUIRE(configure_cuda_faults("").ok());
  REQUIRE(r);
  REQUIRE(checked.notes().size() == 1);
  CHECK(test::has(checked.notes()[0], "was summed on the CPU: allocating its "));
  CHECK(test::has(checked.notes()[0], "cudaErrorMemoryAllocation"));
  CHECK(checked.on_device().empty());
}

namespace {

// A device copy of some bytes, freed on the way out.
struct DeviceCopy {
  void* p = nullptr;
  explicit DeviceCopy(const std::vector<uint8_t>& bytes) {
    REQUIRE(cudaMalloc(&p, bytes.size()) == cudaSuccess);
    REQUIRE(cudaMemcpy(p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  ~DeviceCopy() { (void)cudaFree(p); }
};

}  // namespace

TEST_CASE("device reference: inputs read where the run left them, and the cross-check guarding them",
          "[gpu][device-reference]") {
  auto engine = open_cuda_product_engine(0);
  REQUIRE(engine);
  auto loaded = load_graph_file(test::source_path("graphs/gemm_bias_relu.json"));
  REQUIRE(loaded);
  const Graph& g = *loaded;
  const Bytes in = inputs_of(g, 5);
  // Uploaded from the host's bytes, as where no run left them on the device.
  auto up = [&] {
    CrossCheckedEngine checked(**engine, 512, 1);
    auto r = run_reference(g, in, {}, {}, &checked);
    REQUIRE(r);
    CHECK(test::has((*engine)->phases(), "(0 of 2 read where the run left them)"));
    return r->at("C").value;
  };
  const std::vector<double> want = up();

  // The same bytes on the device: read there, the same reference bit for bit.
  {
    DeviceCopy a(in.at("A")), b(in.at("B"));
    (*engine)->set_resident({{"A", a.p}, {"B", b.p}});
    CrossCheckedEngine checked(**engine, 512, 1);
    auto dev = run_reference(g, in, {}, {}, &checked);
    INFO((dev ? std::string() : dev.error().message));
    REQUIRE(dev);
    CHECK(test::has((*engine)->phases(), "(2 of 2 read where the run left them)"));
    CHECK(dev->at("C").value == want);
  }
  // Other bytes on the device than the host holds (B of another seed): the engine read them
  // (else nothing would differ) and the cross-check refuses its sums.
  {
    const Bytes other = inputs_of(g, 6);
    DeviceCopy a(in.at("A")), b(other.at("B"));
    (*engine)->set_resident({{"A", a.p}, {"B", b.p}});
    CrossCheckedEngine checked(**engine, 512, 1);
    auto dev = run_reference(g, in, {}, {}, &checked);
    REQUIRE_FALSE(dev);
    INFO(dev.error().message);
    CHECK(test::has(dev.error().message, "disagrees with the CPU reference"));
  }
  (*engine)->set_resident({});
  CHECK(up() == want);
}

TEST_CASE("device reference: a one-product check streamed from the device, panel by panel", "[gpu][device-reference]") {
  auto engine = open_cuda_product_engine(0);
  REQUIRE(engine);
  auto loaded = load_graph_text(R"({"format": "gexec.graph", "version": 1, "name": "s", "tensors": [
      {"name": "A", "shape": [300, 512], "dtype": "f32"}, {"name": "B", "shape": [512, 256], "dtype": "f32"},
      {"name": "Bias", "shape": [256], "dtype": "f32"}, {"name": "C", "shape": [300, 256], "dtype": "f32"}],
      "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"], "attrs": {"act": "relu"}}],
      "outputs": ["C"]})", "s.json", ".");
  REQUIRE(loaded);
  const Graph& g = *loaded;
  REQUIRE(streamable(g));
  const Tensor& t = g.tensor(g.outputs[0]);
  const Bytes in = inputs_of(g, 8);
  Precision tf32;
  tf32.tf32 = true;
  auto cpu = run_reference(g, in, {}, tf32);
  REQUIRE(cpu);
  std::vector<uint8_t> got(size_t(t.bytes()));
  for (int64_t i = 0; i < t.numel(); ++i) store_real(got.data(), t, i, cpu->at("C").value[size_t(i)]);
  const auto streamed = [&](const std::vector<uint8_t>& out) {
    CrossCheckedEngine checked(**engine, 512, 1);
    StreamedComparison cmp(t, out.data(), output_tolerance(t));
    int panels = 0;
    const Status st = stream_reference(g, in, tf32, checked, 32768, [&](int64_t x0, const RefTensor& p) {
      CHECK(cmp.add(x0, p));
      ++panels;
    });
    INFO((st ? std::string() : st.error().message));
    REQUIRE(st);
    CHECK(panels == 3);
    CHECK(checked.on_device().at(g.ops[0].name) == 512);
    CHECK(test::has((*engine)->phases(), "3 panels of 128 rows"));
    return cmp.finish();
  };
  const OutputCheck whole = compare_output(t, got.data(), cpu->at("C"), output_tolerance(t));
  const OutputCheck ok = streamed(got);
  CHECK(whole.pass);
  CHECK(ok.pass);
  CHECK(ok.beyond == 0);
  CHECK(std::fabs(ok.norm_ratio - whole.norm_ratio) <= 1e-9 * whole.norm_ratio + 1e-300);
  // One element off in the last panel: refused, and named.
  std::vector<uint8_t> bad = got;
  store_real(bad.data(), t, 299 * 256 + 3, cpu->at("C").value[299 * 256 + 3] + 0.5);
  const OutputCheck off = streamed(bad);
  CHECK_FALSE(off.pass);
  CHECK(off.worst == 299 * 256 + 3);
}

namespace {

void write_f16(const fs::path& file, const std::vector<int64_t>& shape, const std::vector<double>& v) {
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = float_to_f16(float(v[i]));
  REQUIRE(write_npy_f16(file.string(), shape, bits.data()));
}

}  // namespace

TEST_CASE("device reference: a wrong tile and one wrong element at 4096^3 are refused with the default options",
          "[gpu][device-reference]") {
  const int64_t s = 4096;
  const fs::path dir = scratch("4096");
  std::ostringstream text;
  text << R"({"format": "gexec.graph", "version": 1, "name": "big", "tensors": [)"
       << R"({"name": "A", "shape": [)" << s << "," << s << R"(], "dtype": "f16"},)"
       << R"({"name": "B", "shape": [)" << s << "," << s << R"(], "dtype": "f16"},)"
       << R"({"name": "Bias", "shape": [)" << s << R"(], "dtype": "f32", "constant": true},)"
       << R"({"name": "C", "shape": [)" << s << "," << s << R"(], "dtype": "f16"}],)"
       << R"("ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],)"
       << R"( "attrs": {"act": "relu"}}], "outputs": ["C"]})";
  const fs::path graph = dir / "big.json";
  std::ofstream(graph) << text.str();

  // The correct run, checked with the default options.
  RunOptions run;
  run.graph_path = graph.string();
  run.backend = "cuda";
  run.dump_dir = (dir / "run").string();
  run.report_path = (dir / "run.json").string();
  std::ostringstream out, err;
  REQUIRE(run_command(run, out, err) == Exit::ok);
  std::ifstream f(run.report_path);
  const auto rep = nlohmann::json::parse(f, nullptr, false);
  REQUIRE(rep.is_object());
  CHECK(rep["check"]["mode"] == "full");
  CHECK(rep["check"]["outputs"][0]["reference"] == "device");
  WARN("4096^3 GEMM+bias+ReLU, the default check: " << rep["times_ms"]["check"].get<double>() << " ms");

  auto c = read_npy((dir / "run" / "C.npy").string());
  REQUIRE(c);
  const std::vector<double>& c0 = c->values;
  auto mutant = [&](const std::string& name, std::vector<double> values) {
    const fs::path mdir = dir / name;
    fs::create_directories(mdir);
    write_f16(mdir / "C.npy", {s, s}, values);
    CheckOptions o;
    o.graph_path = graph.string();
    o.inputs_dir = (dir / "run").string();
    o.outputs_dir = mdir.string();
    o.report_path = (mdir / "r.json").string();
    std::ostringstream o_out, o_err;
    const Exit e = check_command(o, o_out, o_err);
    INFO(name << ":\n" << o_out.str() << o_err.str());
    CHECK(e == Exit::check_failed);
    std::ifstream rf(o.report_path);
    const auto r = nlohmann::json::parse(rf, nullptr, false);
    REQUIRE(r.is_object());
    CHECK(r["check"]["outputs"][0]["reference"] == "device");
    CHECK(r["check"]["outputs"][0]["beyond"].get<int64_t>() >= 1);
  };
  {
    std::vector<double> m = c0;  // a 64x64 tile where no kernel tile starts, holding another tile's values
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t q = 0; q < 64; ++q) m[size_t((1000 + r) * s + 2000 + q)] = c0[size_t((3000 + r) * s + 100 + q)];
    mutant("stale", m);
  }
  {
    double ss = 0;
    for (double v : c0) ss += v * v;
    const double rms = std::sqrt(ss / double(c0.size()));
    std::vector<double> m = c0;
    size_t at = size_t(1234 * s + 567);
    while (c0[at] == 0 || std::fabs(c0[at]) > rms) ++at;  // a typical element, not one the ReLU clipped
    m[at] = c0[at] + 0.01 * rms;
    mutant("one", m);
  }
  fs::remove_all(dir);
}
