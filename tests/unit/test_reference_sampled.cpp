// The sampled reference: the same bits as the full reference where it samples, the elements it
// picks, and a sampled comparison that catches a wrong element.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "example_graphs.hpp"
#include "graph_builder.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "process.hpp"

using namespace gexec;

namespace {

using Inputs = std::map<std::string, std::vector<uint8_t>>;

using test::add;
using test::add_op;

using test::inputs_of;

int64_t check_same_bits_with(const Graph& g, uint64_t seed, int64_t samples, const Precision& prec) {
  const Inputs in = inputs_of(g, seed);
  auto full = run_reference(g, in, {}, prec);
  REQUIRE(full.ok());
  auto part = run_reference_sampled(g, in, samples, seed, {}, prec);
  REQUIRE(part.ok());
  int64_t compared = 0;
  for (TensorId id : g.outputs) {
    const Tensor& t = g.tensor(id);
    const RefTensor& f = full->at(t.name);
    const SampledRef& s = part->at(t.name);
    REQUIRE(s.index.size() == size_t(std::min(samples, t.numel())));
    REQUIRE(s.ref.value.size() == s.index.size());
    for (size_t k = 0; k < s.index.size(); ++k) {
      const size_t i = size_t(s.index[k]);
      // Bit equality, NaN included: compare the representations.
      const bool same_value = std::memcmp(&f.value[i], &s.ref.value[k], sizeof(double)) == 0;
      const bool same_scale = std::memcmp(&f.scale[i], &s.ref.scale[k], sizeof(double)) == 0;
      const bool same_var = std::memcmp(&f.var[i], &s.ref.var[k], sizeof(double)) == 0;
      CHECK(s.ref.rounded == f.rounded);
      if (!same_value || !same_scale || !same_var) {
        INFO(t.name << " element " << i << ": full " << f.value[i] << " / " << f.scale[i] << ", sampled "
                    << s.ref.value[k] << " / " << s.ref.scale[k] << "; var " << f.var[i] << " / " << s.ref.var[k]);
        REQUIRE(false);
      }
      ++compared;
    }
  }
  return compared;
}

// The sampled reference equals the full one, value, scale and variance, bit for bit, at every
// sampled element, for a small sample and for one that covers the whole tensor (with TF32
// products, so that every term of the variance is exercised, and once more with a blocked
// accumulator of 4 K terms, the FP8 model). Returns the number of elements compared (each time).
int64_t check_same_bits(const Graph& g, uint64_t seed, int64_t samples) {
  Precision prec;
  prec.tf32 = true;
  const int64_t compared = check_same_bits_with(g, seed, samples, prec);
  prec.accumulate_u = 0x1p-13, prec.accumulate_block = 4;
  INFO("accumulate_block 4");
  CHECK(check_same_bits_with(g, seed, samples, prec) == compared);
  return compared;
}

// check_same_bits on every graph file in `dir` (under the source tree), 300 samples each, from
// the graph's own seed. Returns the number of graphs.
int check_same_bits_in(const std::string& dir) {
  int graphs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_path(dir))) {
    if (entry.path().extension() != ".json") continue;
    // A graph of GiBs (the d 8192 MLP block) would take the full reference hours on a CPU.
    if (test::graph_bytes(entry.path().string()) > double(int64_t(1) << 30)) {
      WARN("skipped " << entry.path().filename().string() << ": over 1 GiB of tensors");
      continue;
    }
    auto g = load_graph_file(entry.path().string());
    REQUIRE(g.ok());
    INFO(entry.path().string());
    if (has_block_scales(*g)) {
      // The sampled reference refuses them (the check always takes the full one for them).
      std::map<std::string, std::vector<uint8_t>> none;
      auto r = run_reference_sampled(*g, none, 300, 0);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().message.find("block scales need the full reference") != std::string::npos);
      WARN("skipped " << entry.path().filename().string() << ": block scales, no sampled reference");
      continue;
    }
    if (std::any_of(g->ops.begin(), g->ops.end(), [](const Op& op) { return op.type == OpType::GROUPED_GEMM; })) {
      std::map<std::string, std::vector<uint8_t>> none;
      auto r = run_reference_sampled(*g, none, 300, 0);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().message.find("GROUPED_GEMM needs the full reference") != std::string::npos);
      WARN("skipped " << entry.path().filename().string() << ": GROUPED_GEMM, no sampled reference");
      continue;
    }
    CHECK(check_same_bits(*g, g->seed.value_or(0), 300) > 0);
    ++graphs;
  }
  return graphs;
}

}  // namespace

TEST_CASE("sampled reference: single products in every form give the full reference's bits", "[sample]") {
  const int64_t m = 7, n = 5, k = 9;
  int variants = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (Layout la : {Layout::rowmajor, Layout::colmajor})
        for (Layout lc : {Layout::rowmajor, Layout::colmajor})
          for (int kind = 0; kind < 4; ++kind) {  // MATMUL; GEMM_BIAS_ACT with none, relu, gelu
            Graph g;
            const TensorId a = add(g, "A", ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, DType::f16, la);
            const TensorId b = add(g, "B", tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, DType::f16);
            const TensorId c = add(g, "C", {m, n}, kind == 0 ? DType::f32 : DType::f16, lc);
            if (kind == 0) {
              Op& op = add_op(g, OpType::MATMUL, {a, b}, c);
              op.attrs.trans_a = ta, op.attrs.trans_b = tb, op.attrs.alpha = -0.75;
            } else {
              const TensorId bias = add(g, "bias", {n});
              Op& op = add_op(g, OpType::GEMM_BIAS_ACT, {a, b, bias}, c);
              op.attrs.trans_a = ta, op.attrs.trans_b = tb;
              op.attrs.act = kind == 1 ? Act::none : kind == 2 ? Act::relu : Act::gelu;
            }
            g.outputs = {c};
            REQUIRE(check_op(g, g.ops[0]).empty());
            CHECK(check_same_bits(g, 7 + variants, 11) == 11);
            CHECK(check_same_bits(g, 7 + variants, 1000) == m * n);
            ++variants;
          }
  CHECK(variants == 64);
}

TEST_CASE("sampled reference: batched products, with a batched or a shared B", "[sample]") {
  for (bool shared : {false, true}) {
    Graph g;
    const TensorId a = add(g, "A", {3, 6, 10}, DType::bf16);
    const TensorId b = add(g, "B", shared ? std::vector<int64_t>{10, 4} : std::vector<int64_t>{3, 10, 4}, DType::bf16);
    const TensorId c = add(g, "C", {3, 6, 4}, DType::bf16);
    add_op(g, OpType::MATMUL, {a, b}, c);
    g.outputs = {c};
    REQUIRE(check_op(g, g.ops[0]).empty());
    CHECK(check_same_bits(g, 3, 17) == 17);
    CHECK(check_same_bits(g, 3, 72) == 72);
  }
}

TEST_CASE("sampled reference: chains and elementwise graphs", "[sample]") {
  SECTION("an elementwise graph with layouts") {
    Graph g;
    const TensorId x = add(g, "X", {5, 4}, DType::f32, Layout::colmajor), bias = add(g, "b", {4});
    const TensorId xb = add(g, "XB", {5, 4}), y = add(g, "Y", {5, 4}, DType::f16, Layout::colmajor);
    const TensorId s = add(g, "S", {5, 4}, DType::f16), r = add(g, "R", {5, 4}, DType::f32, Layout::colmajor);
    const TensorId ge = add(g, "G", {5, 4}, DType::bf16), cs = add(g, "CS", {5, 4}, DType::f16);
    add_op(g, OpType::BIAS_ADD, {x, bias}, xb);
    add_op(g, OpType::ADD, {xb, y}, s);
    add_op(g, OpType::RELU, {s}, r);
    add_op(g, OpType::GELU, {s}, ge).attrs.approximate = GeluApprox::none;
    add_op(g, OpType::CAST, {ge}, cs);
    g.outputs = {s, r, cs};
    CHECK(check_same_bits(g, 1, 6) == 18);
    CHECK(check_same_bits(g, 1, 20) == 60);
  }
  SECTION("a product fed by a product, and a transposed operand from an op") {
    Graph g;
    const TensorId x = add(g, "X", {6, 8}, DType::f16), w1 = add(g, "W1", {8, 12}, DType::f16);
    const TensorId h = add(g, "H", {6, 12}, DType::f16), hr = add(g, "HR", {6, 12}, DType::f16);
    const TensorId w2 = add(g, "W2", {5, 12}, DType::f16), o = add(g, "O", {6, 5}, DType::f16);
    const TensorId hc = add(g, "HC", {6, 12}, DType::f32, Layout::colmajor), o2 = add(g, "O2", {12, 12});
    add_op(g, OpType::MATMUL, {x, w1}, h);
    add_op(g, OpType::RELU, {h}, hr);
    add_op(g, OpType::MATMUL, {hr, w2}, o).attrs.trans_b = true;
    add_op(g, OpType::CAST, {h}, hc);
    add_op(g, OpType::MATMUL, {hc, hc}, o2).attrs.trans_a = true;  // H^T H
    g.outputs = {o, o2};
    for (const Op& op : g.ops) REQUIRE(check_op(g, op).empty());
    CHECK(check_same_bits(g, 5, 9) == 18);
    CHECK(check_same_bits(g, 5, 1000) == 30 + 144);
  }
  SECTION("products of a product of ones: lines of one value along K, on either side") {
    Graph g;
    const TensorId ones = add(g, "ONES", {5, 5}), t = add(g, "T", {5, 3});
    g.tensor(ones).init = Init{InitKind::ones};
    const TensorId h = add(g, "H", {5, 3}, DType::f16), w = add(g, "W", {5, 2}), v = add(g, "V", {4, 5});
    const TensorId o = add(g, "O", {3, 2}), p = add(g, "P", {4, 3});
    add_op(g, OpType::MATMUL, {ones, t}, h);                  // every row of H the same
    add_op(g, OpType::MATMUL, {h, w}, o).attrs.trans_a = true;  // op(A) = H^T: its rows one value
    add_op(g, OpType::MATMUL, {v, h}, p);                      // op(B) = H: its columns one value
    g.outputs = {o, p};
    for (const Op& op : g.ops) REQUIRE(check_op(g, op).empty());
    CHECK(check_same_bits(g, 3, 4) == 8);
    CHECK(check_same_bits(g, 3, 100) == 6 + 12);
  }
  SECTION("every graph that the generator found (tests/data/graphgen)") {
    CHECK(check_same_bits_in("tests/data/graphgen") >= 10);
  }
  SECTION("every graph under graphs/") { CHECK(check_same_bits_in("graphs") >= 8); }
}

TEST_CASE("sampled reference: the elements it chooses", "[sample]") {
  Graph g;
  const TensorId wide = add(g, "W", {50, 30}), tall = add(g, "T", {2, 40, 7}, DType::f16);
  const TensorId col = add(g, "C", {9, 40}, DType::f32, Layout::colmajor), vec = add(g, "V", {100});
  for (TensorId id : {wide, tall, col, vec}) {
    const Tensor& t = g.tensor(id);
    const int64_t cols = t.shape.back(), rows = t.numel() / cols;
    for (int64_t samples : {int64_t(3), std::max(rows, cols), std::max(rows, cols) + 17}) {
      INFO(t.name << ", " << samples << " samples");
      const std::vector<int64_t> idx = choose_samples(t, samples, 42);
      REQUIRE(int64_t(idx.size()) == std::min(samples, t.numel()));
      CHECK(std::set<int64_t>(idx.begin(), idx.end()).size() == idx.size());
      CHECK(std::is_sorted(idx.begin(), idx.end()));
      CHECK(idx == choose_samples(t, samples, 42));
      if (samples < t.numel()) CHECK(idx != choose_samples(t, samples, 43));
      if (samples < std::max(rows, cols)) continue;
      std::set<int64_t> seen_rows, seen_cols;
      for (int64_t s : idx) {
        // Back from storage to logical (row, column).
        const int64_t l = t.layout == Layout::colmajor ? (s % t.shape[0]) * cols + s / t.shape[0] : s;
        seen_rows.insert(l / cols);
        seen_cols.insert(l % cols);
      }
      CHECK(int64_t(seen_rows.size()) == rows);
      CHECK(int64_t(seen_cols.size()) == cols);
    }
    const std::vector<int64_t> all = choose_samples(t, t.numel() + 5, 1);
    REQUIRE(int64_t(all.size()) == t.numel());
    for (int64_t i = 0; i < t.numel(); ++i) CHECK(all[size_t(i)] == i);
  }
}

TEST_CASE("sampled comparison: statistics over the sample, and a wrong element is caught", "[sample]") {
  Graph g;
  const TensorId a = add(g, "A", {16, 24}, DType::f16), b = add(g, "B", {24, 20}, DType::f16);
  const TensorId c = add(g, "C", {16, 20}, DType::f16, Layout::colmajor);
  add_op(g, OpType::MATMUL, {a, b}, c);
  g.outputs = {c};
  const Tensor& t = g.tensor(c);
  const Inputs in = inputs_of(g, 9);
  auto full = run_reference(g, in);
  auto part = run_reference_sampled(g, in, 40, 9);
  REQUIRE(full.ok());
  REQUIRE(part.ok());
  const SampledRef& s = part->at("C");
  // A device's output equal to the reference, rounded to f16 (the reference already is).
  std::vector<uint8_t> got(size_t(t.bytes()));
  for (int64_t i = 0; i < t.numel(); ++i) store_from_float(got.data(), t.dtype, i, float(full->at("C").value[size_t(i)]));
  const Tolerance tol = default_tolerance(t.dtype);
  OutputCheck ok = compare_sampled(t, got.data(), s, tol);
  CHECK(ok.pass);
  CHECK(ok.mode == CompareMode::sample);
  CHECK(ok.checked == 40);
  CHECK(ok.count == t.numel());
  CHECK(ok.beyond == 0);
  CHECK(ok.max_abs == 0);

  // Off by much more than the bound at the 7th sampled element.
  const int64_t bad = s.index[6];
  const double was = full->at("C").value[size_t(bad)];
  store_from_float(got.data(), t.dtype, bad, float(was + 1.0 + 0.5 * std::fabs(was)));
  OutputCheck caught = compare_sampled(t, got.data(), s, tol);
  CHECK_FALSE(caught.pass);
  CHECK(caught.beyond == 1);
  CHECK(caught.worst == bad);
  CHECK(caught.worst_ref == was);
  CHECK(caught.max_abs >= 1.0);
  CHECK(caught.rel_fro > 0);
  // The full comparison agrees on the count.
  OutputCheck whole = compare_output(t, got.data(), full->at("C"), tol);
  CHECK(whole.beyond == 1);
  CHECK(whole.checked == t.numel());
  CHECK(whole.mode == CompareMode::full);

  // A sample with indexes outside the tensor vouches for nothing.
  SampledRef broken = s;
  broken.index.back() = t.numel();
  CHECK_FALSE(compare_sampled(t, got.data(), broken, tol).pass);
}
