// The streamed check of a one-product graph (stream_reference + StreamedComparison): panel by
// panel, the same figures as the whole reference and compare_output, bit for bit, for every kind
// of product sum (TF32 squares, FP8 blocks, bias, residual, activations), a wrong element caught
// the same way, and panels that do not follow refused.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/real_value.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "../../src/verify/parallel.hpp"
#include "graph_builder.hpp"

using namespace gexec;

namespace {

using Bytes = std::map<std::string, std::vector<uint8_t>>;

using test::inputs_of;

Graph graph(const std::string& tensors, const std::string& op) {
  auto g = load_graph_text(R"({"format": "gexec.graph", "version": 1, "name": "s", "tensors": [)" + tensors +
                               R"(], "ops": [)" + op + R"(], "outputs": ["C"]})",
                           "s.json", ".");
  INFO((g ? std::string() : g.error().message));
  REQUIRE(g);
  return *g;
}

// A kernel's result: the reference's values, one in eight moved by an output ulp either way.
std::vector<uint8_t> near_output(const Tensor& t, const RefTensor& ref) {
  std::vector<uint8_t> bytes(size_t(t.bytes()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double r = ref.value[size_t(i)];
    const uint64_t h = uint64_t(i) * 0x9E3779B97F4A7C15ull >> 58;  // 0..63
    const double step = (h < 4 ? 1.0 : h < 8 ? -1.0 : 0.0) * ulp_of(t.dtype, r);
    store_real(bytes.data(), t, i, r + step);
  }
  return bytes;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void require_same(const OutputCheck& a, const OutputCheck& b) {
  CHECK(a.checked == b.checked);
  CHECK(a.beyond == b.beyond);
  CHECK(a.got_nonfinite == b.got_nonfinite);
  CHECK(a.ref_nonfinite == b.ref_nonfinite);
  CHECK(a.unbounded == b.unbounded);
  CHECK(a.worst == b.worst);
  CHECK(a.pass == b.pass);
  for (auto [x, y] : {std::pair{a.max_abs, b.max_abs}, {a.max_rel, b.max_rel}, {a.rel_fro, b.rel_fro},
                      {a.rel_fro_bound, b.rel_fro_bound}, {a.norm_ratio, b.norm_ratio}, {a.max_ratio, b.max_ratio},
                      {a.worst_got, b.worst_got}, {a.worst_ref, b.worst_ref}, {a.worst_bound, b.worst_bound}}) {
    INFO(x << " against " << y);
    CHECK(same_bits(x, y));
  }
}

struct Streamed {
  OutputCheck check;
  int panels = 0;
  int64_t last = 0;  // elements in the last panel
};

Streamed stream(const Graph& g, const Bytes& in, const Precision& prec, const void* got, Tolerance tol) {
  const Tensor& t = g.tensor(g.outputs[0]);
  StreamedComparison cmp(t, got, tol);
  Streamed s;
  bool ok = true;
  const Status st = stream_reference(g, in, prec, cpu_product_engine(), ref::kChunk, [&](int64_t x0, const RefTensor& p) {
    ok = ok && cmp.add(x0, p);
    ++s.panels;
    s.last = int64_t(p.value.size());
  });
  INFO((st ? std::string() : st.error().message));
  REQUIRE(st);
  CHECK(ok);
  s.check = cmp.finish();
  return s;
}

}  // namespace

TEST_CASE("streamed check: the figures of the whole reference, bit for bit, panel by panel", "[check][stream]") {
  // 300 x 256: panels of 128 rows (one comparison chunk each), the last of 44.
  const std::string ab16 = R"({"name": "A", "shape": [300, 96], "dtype": "f16"},
                               {"name": "B", "shape": [256, 96], "dtype": "f16"})";
  Precision tf32, fp8;
  tf32.tf32 = true;
  fp8.accumulate_u = 0x1p-13, fp8.accumulate_block = 32;
  const struct {
    const char* what;
    Graph g;
    Precision prec;
  } cases[] = {
      {"f16, bias, GELU, alpha, trans_b",
       graph(ab16 + R"(, {"name": "Bias", "shape": [256], "dtype": "f32"}, {"name": "C", "shape": [300, 256], "dtype": "f16"})",
             R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],
                 "attrs": {"act": "gelu", "trans_b": true, "alpha": 0.75}})"),
       {}},
      {"f16, residual, ReLU",
       graph(ab16 + R"(, {"name": "Bias", "shape": [256], "dtype": "f16"}, {"name": "R", "shape": [300, 256], "dtype": "f32"},
                       {"name": "C", "shape": [300, 256], "dtype": "bf16"})",
             R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias", "R"], "outputs": ["C"],
                 "attrs": {"act": "relu", "trans_b": true, "residual": true, "beta": 0.5}})"),
       {}},
      {"f32 on TF32 (the squares' sums)",
       graph(R"({"name": "A", "shape": [300, 64], "dtype": "f32"}, {"name": "B", "shape": [64, 256], "dtype": "f32"},
                {"name": "C", "shape": [300, 256], "dtype": "f32"})",
             R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"alpha": -1.25}})"),
       tf32},
      {"f8 with scales, the blocked accumulator",
       graph(R"({"name": "A", "shape": [300, 96], "dtype": "f8e4m3", "scale": 0.5},
                {"name": "B", "shape": [256, 96], "dtype": "f8e4m3", "scale": {"axis": 0, "values": [)" +
                 [] {
                   std::string v;
                   for (int i = 0; i < 256; ++i) v += (i ? ", " : "") + std::to_string(0.25 + (i % 7) * 0.125);
                   return v;
                 }() +
                 R"(]}}, {"name": "Bias", "shape": [256], "dtype": "bf16"}, {"name": "C", "shape": [300, 256], "dtype": "bf16"})",
             R"({"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],
                 "attrs": {"act": "none", "trans_b": true}})"),
       fp8},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const Graph& g = c.g;
    REQUIRE(streamable(g));
    const Tensor& t = g.tensor(g.outputs[0]);
    const Bytes in = inputs_of(g, 21);
    auto whole = run_reference(g, in, {}, c.prec);
    REQUIRE(whole);
    const RefTensor& ref = whole->at("C");
    std::vector<uint8_t> got = near_output(t, ref);
    const Tolerance tol = output_tolerance(t);

    const OutputCheck want = compare_output(t, got.data(), ref, tol);
    const Streamed s = stream(g, in, c.prec, got.data(), tol);
    CHECK(s.panels == 3);
    CHECK(s.last == 44 * 256);
    CHECK(want.pass);
    require_same(want, s.check);

    // One element far off (in the last panel): refused, the same way.
    store_real(got.data(), t, 299 * 256 + 7, ref.value[299 * 256 + 7] + 64 * ulp_of(t.dtype, ref.value[299 * 256 + 7]) + 1.0);
    const OutputCheck bad = compare_output(t, got.data(), ref, tol);
    const Streamed sb = stream(g, in, c.prec, got.data(), tol);
    CHECK_FALSE(bad.pass);
    CHECK(bad.worst == 299 * 256 + 7);
    require_same(bad, sb.check);
  }
}

TEST_CASE("streamed check: which graphs stream, and panels that do not follow", "[check][stream]") {
  const std::string ab = R"({"name": "A", "shape": [64, 32], "dtype": "f16"}, {"name": "B", "shape": [32, 48], "dtype": "f16"})";
  const std::string mm = R"({"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]})";
  CHECK(streamable(graph(ab + R"(, {"name": "C", "shape": [64, 48], "dtype": "f16"})", mm)));
  CHECK_FALSE(streamable(graph(ab + R"(, {"name": "C", "shape": [64, 48], "dtype": "f16", "layout": "colmajor"})", mm)));
  auto chain = load_graph_file(std::string(GEXEC_SOURCE_DIR) + "/graphs/mlp3.json");
  REQUIRE(chain);
  CHECK_FALSE(streamable(*chain));

  // Stream rows: whole chunks of the comparison, at most C's rows.
  CHECK(stream_rows(8192, 8192, int64_t(1) << 22) == 512);
  CHECK(stream_rows(300, 256, ref::kChunk) == 128);
  CHECK(stream_rows(100, 256, ref::kChunk) == 100);
  CHECK(stream_rows(5000, 1000, int64_t(1) << 22) % (ref::kChunk / 8) == 0);

  const Graph g = graph(ab + R"(, {"name": "C", "shape": [64, 48], "dtype": "f16"})", mm);
  const Tensor& t = g.tensor(g.outputs[0]);
  const Bytes in = inputs_of(g, 3);
  auto whole = run_reference(g, in);
  REQUIRE(whole);
  const std::vector<uint8_t> got = near_output(t, whole->at("C"));
  StreamedComparison skipped(t, got.data(), output_tolerance(t));
  RefTensor part = whole->at("C");
  part.value.resize(16 * 48), part.scale.resize(16 * 48), part.var.resize(16 * 48);
  CHECK(skipped.add(0, part));
  CHECK_FALSE(skipped.add(32 * 48, part));  // rows 16 to 31 left out
  const OutputCheck c = skipped.finish();
  CHECK_FALSE(c.pass);
  CHECK(c.beyond == c.count);
}
