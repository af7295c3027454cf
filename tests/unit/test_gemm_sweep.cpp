// `gexec gemm`'s sweep: sizes, lists and ranges, the cartesian product, each point's graph; the
// CSV it writes; the sample plan behind --iters; percentiles.
#include <cmath>
#include <set>

#include "catch.hpp"
#include "gexec/app/gemm_sweep.hpp"
#include "gexec/exec/timing.hpp"
#include "gexec/app/csv.hpp"

using namespace gexec;

namespace {

// The sweep refuses `bad` as bad input, with a message that mentions `what`.
void refused(const GemmSweepText& bad, const std::string& what) {
  auto r = expand_sweep(bad);
  INFO(what);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Exit::bad_input);
  CHECK(r.error().message.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("sizes: a value, a list, a range, and mixes of them", "[gemm][sweep]") {
  CHECK(*parse_sizes("64", "--m") == std::vector<int64_t>{64});
  CHECK(*parse_sizes("64,128", "--m") == std::vector<int64_t>{64, 128});
  CHECK(*parse_sizes("80:160:80", "--k") == std::vector<int64_t>{80, 160});
  CHECK(*parse_sizes("1:10:4", "--k") == std::vector<int64_t>{1, 5, 9});  // the end is not on a step
  CHECK(*parse_sizes("16, 32:64:32", "--n") == std::vector<int64_t>{16, 32, 64});
  const auto cubes = *parse_sizes("1024:8192:1024", "--m");
  REQUIRE(cubes.size() == 8);
  CHECK(cubes.front() == 1024);
  CHECK(cubes.back() == 8192);
}

TEST_CASE("sizes: every malformed form is refused, naming the option", "[gemm][sweep]") {
  for (const char* bad : {"", "0", "-3", "a", "64,", "1.5", "10:5:1", "1:10:0", "1:2", "1:2:3:4", "1:10000000:1"}) {
    auto r = parse_sizes(bad, "--m");
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.rfind("--m", 0) == 0);
  }
}

TEST_CASE("the sweep is the cartesian product, the last option varying fastest", "[gemm][sweep]") {
  GemmSweepText t;
  t.m = "64,128";
  t.n = "96";
  t.k = "80:160:80";
  t.dtype = "f16";
  t.bias = "f32";
  t.act = "relu,none";
  auto pts = expand_sweep(t);
  REQUIRE(pts.ok());
  REQUIRE(pts->size() == 8);
  CHECK((*pts)[0].m == 64);
  CHECK((*pts)[0].k == 80);
  CHECK((*pts)[0].act == Act::relu);
  CHECK((*pts)[1].act == Act::none);
  CHECK((*pts)[2].k == 160);
  CHECK((*pts)[7].m == 128);
  std::set<std::tuple<int64_t, int64_t, int>> distinct;
  for (const GemmPoint& p : *pts) {
    CHECK(p.n == 96);
    CHECK(p.out_dtype == DType::f16);  // the input's, by default
    REQUIRE(p.bias.has_value());
    CHECK(*p.bias == DType::f32);
    distinct.insert({p.m, p.k, int(p.act)});
  }
  CHECK(distinct.size() == 8);

  t.out_dtype = "f32";
  t.trans = "nn,nt,tn,tt";
  t.dtype = "f16,bf16";
  auto more = expand_sweep(t);
  REQUIRE(more.ok());
  CHECK(more->size() == 8 * 4 * 2);
  CHECK((*more)[1].trans_b);
  CHECK_FALSE((*more)[1].trans_a);
  CHECK((*more)[0].out_dtype == DType::f32);
}

TEST_CASE("shapes from --shapes or --cube instead of --m --n --k", "[gemm][sweep]") {
  GemmSweepText t;
  t.cube = "1024:8192:1024";
  t.dtype = "f16,bf16";
  auto cubes = expand_sweep(t);
  REQUIRE(cubes.ok());
  REQUIRE(cubes->size() == 16);
  CHECK((*cubes)[0].dtype == DType::f16);
  CHECK((*cubes)[1].dtype == DType::bf16);
  for (const GemmPoint& p : *cubes) {
    CHECK(p.m == p.n);
    CHECK(p.n == p.k);
  }
  CHECK((*cubes)[15].m == 8192);
  GemmSweepText s;
  s.shapes = "4095x4097x4093,64x96x80";
  auto shapes = expand_sweep(s);
  REQUIRE(shapes.ok());
  REQUIRE(shapes->size() == 2);
  CHECK((*shapes)[0].m == 4095);
  CHECK((*shapes)[0].n == 4097);
  CHECK((*shapes)[0].k == 4093);
  s.m = "64";  // two ways at once
  CHECK_FALSE(expand_sweep(s).ok());
  CHECK_FALSE(expand_sweep(GemmSweepText{}).ok());  // no way at all
  GemmSweepText bad;
  bad.shapes = "64x96";
  CHECK_FALSE(expand_sweep(bad).ok());
}

TEST_CASE("the sweep refuses unknown types, activations, transposes and huge products", "[gemm][sweep]") {
  GemmSweepText base;
  base.m = base.n = base.k = "64";
  auto t = base;
  t.dtype = "f17";
  refused(t, "--dtype");
  t = base;
  t.bias = "f32,int8";
  refused(t, "--bias");
  t = base;
  t.act = "swish";
  refused(t, "--act");
  t = base;
  t.trans = "nx";
  refused(t, "--trans");
  t = base;
  t.m = t.n = t.k = "1:100:1";
  refused(t, "points");
  t = base;
  t.m = "";
  refused(t, "--m");
}

TEST_CASE("the sweep's FP8 points: f8e4m3 A and B, bf16 C by default, fast_accum on f8 points only", "[gemm][sweep][f8]") {
  GemmSweepText t;
  t.m = t.n = t.k = "64";
  t.dtype = "f16,f8e4m3";
  t.bias = "f32";
  t.act = "relu";
  t.trans = "nt";
  t.fast_accum = true;
  auto pts = expand_sweep(t);
  REQUIRE(pts.ok());
  REQUIRE(pts->size() == 2);
  CHECK((*pts)[0].dtype == DType::f16);
  CHECK((*pts)[0].out_dtype == DType::f16);
  CHECK_FALSE((*pts)[0].fast_accum);
  CHECK((*pts)[1].dtype == DType::f8e4m3);
  CHECK((*pts)[1].out_dtype == DType::bf16);
  CHECK((*pts)[1].fast_accum);
  const Graph g = gemm_graph((*pts)[1]);
  CHECK(verify(g).empty());
  CHECK(g.tensor(g.find_tensor("A")).dtype == DType::f8e4m3);
  CHECK(g.tensor(g.find_tensor("B")).dtype == DType::f8e4m3);
  CHECK(g.tensor(g.find_tensor("B")).shape == std::vector<int64_t>{64, 64});
  CHECK(g.tensor(g.find_tensor("C")).dtype == DType::bf16);
  CHECK(g.ops[0].attrs.fast_accum);
  CHECK(verify(gemm_graph((*pts)[0])).empty());  // no fast_accum on the f16 point

  t.dtype = "f8e4m3";
  t.out_dtype = "f8e4m3";
  auto f8_out = expand_sweep(t);
  REQUIRE(f8_out.ok());
  CHECK(f8_out->front().out_dtype == DType::f8e4m3);
  CHECK(verify(gemm_graph(f8_out->front())).empty());

  GemmSweepText b = t;
  b.out_dtype.clear();
  b.dtype = "f8e5m2";
  refused(b, "f8e5m2 x f8e5m2");
  b.dtype = "f8e4m3";
  b.bias = "f8e4m3";
  refused(b, "--bias");
  b.bias = "none";
  b.out_dtype = "f8e5m2";
  refused(b, "--out-dtype");
  b.dtype = "f16";
  b.out_dtype = "f8e4m3";
  refused(b, "needs f8 inputs");
  b.out_dtype.clear();
  refused(b, "--fast-accum");
}

TEST_CASE("--scale row and block: the f8 operands' scales as the recipes set them", "[gemm][sweep][f8]") {
  GemmSweepText t;
  t.m = "64", t.n = "256", t.k = "384";
  t.dtype = "f8e4m3";
  t.scale = "row";
  auto rows = expand_sweep(t);
  REQUIRE(rows.ok());
  const Graph r = gemm_graph(rows->front());
  CHECK(verify(r).empty());
  CHECK(r.tensor(r.find_tensor("A")).scale.axis == 0);
  CHECK(r.tensor(r.find_tensor("A")).scale.values.size() == 64);
  CHECK(r.tensor(r.find_tensor("B")).scale.axis == 1);
  CHECK(r.tensor(r.find_tensor("B")).scale.values.size() == 256);

  for (const char* trans : {"nn", "tn"}) {
    INFO(trans);
    t.scale = "block";
    t.trans = trans;
    auto blocks = expand_sweep(t);
    REQUIRE(blocks.ok());
    CHECK(blocks->front().block_scales);
    const Graph g = gemm_graph(blocks->front());
    CHECK(verify(g).empty());
    const Tensor& a = g.tensor(g.find_tensor("A"));
    const Tensor& b = g.tensor(g.find_tensor("B"));
    // One scale per 128 along K for A (K is A's column, or its row when transposed), 128x128 for B.
    CHECK(a.scale.block == (trans[0] == 't' ? std::array<int64_t, 2>{128, 1} : std::array<int64_t, 2>{1, 128}));
    CHECK(b.scale.block == std::array<int64_t, 2>{128, 128});
    CHECK(g.tensor(a.scale.tensor).shape == (trans[0] == 't' ? std::vector<int64_t>{3, 64} : std::vector<int64_t>{64, 3}));
    CHECK(g.tensor(b.scale.tensor).shape == std::vector<int64_t>{3, 2});
    CHECK(g.tensor(b.scale.tensor).init->low > 0);
  }
  GemmSweepText bad = t;
  bad.scale = "blocks";
  refused(bad, "--scale");
  bad.scale = "block";
  bad.scale_a = "2";
  refused(bad, "leave out --scale-a");
  bad.scale_a.clear();
  bad.dtype = "f16";
  refused(bad, "only on f8 tensors");
  bad.dtype = "f8e4m3";
  bad.out_dtype = "f8e4m3";
  refused(bad, "block scales writes f16, bf16 or f32");
}

TEST_CASE("each point's graph is valid and shaped by its transposes and batch", "[gemm][sweep]") {
  GemmPoint p;
  p.m = 64, p.n = 96, p.k = 80;
  p.bias = DType::f32;
  p.act = Act::gelu;
  Graph g = gemm_graph(p);
  CHECK(verify(g).empty());
  REQUIRE(g.ops.size() == 1);
  CHECK(g.ops[0].type == OpType::GEMM_BIAS_ACT);
  CHECK(g.ops[0].attrs.act == Act::gelu);
  CHECK(g.tensor(g.find_tensor("A")).shape == std::vector<int64_t>{64, 80});
  CHECK(g.tensor(g.find_tensor("B")).shape == std::vector<int64_t>{80, 96});
  CHECK(g.tensor(g.find_tensor("Bias")).constant);
  CHECK(g.tensor(g.find_tensor("C")).shape == std::vector<int64_t>{64, 96});

  p.trans_a = p.trans_b = true;
  p.batch = 3;
  p.bias.reset();
  g = gemm_graph(p);
  CHECK(verify(g).empty());
  CHECK(g.find_tensor("Bias") == kNone);
  CHECK(g.ops[0].inputs.size() == 2);
  CHECK(g.tensor(g.find_tensor("A")).shape == std::vector<int64_t>{3, 80, 64});
  CHECK(g.tensor(g.find_tensor("B")).shape == std::vector<int64_t>{3, 96, 80});
  CHECK(g.tensor(g.find_tensor("C")).shape == std::vector<int64_t>{3, 64, 96});
  CHECK(trans_name(p) == "tt");
  CHECK(bias_name(p) == "none");
}

TEST_CASE("CSV fields are quoted only when they must be", "[gemm][csv]") {
  CHECK(csv_field("cublaslt.gemm") == "cublaslt.gemm");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_line({"1", "x,y", ""}) == "1,\"x,y\",\n");
}

TEST_CASE("tags are key:value pairs with distinct keys", "[gemm][csv]") {
  auto t = parse_tags("gpu:h200,run:3,empty:");
  REQUIRE(t.ok());
  REQUIRE(t->size() == 3);
  CHECK((*t)[0] == std::pair<std::string, std::string>{"gpu", "h200"});
  CHECK((*t)[2].second.empty());
  CHECK(parse_tags("")->empty());
  for (const char* bad : {"gpu", ":x", "a:1,a:2", "a:1,"}) {
    INFO(bad);
    CHECK_FALSE(parse_tags(bad).ok());
  }
}

TEST_CASE("--append writes the header into an empty file, nothing under the same header, and refuses another", "[gemm][csv]") {
  const std::string header = "m,n,result\n";
  CHECK(*csv_append_start(FileHead{}, header, "f.csv") == header);
  CHECK(csv_append_start(FileHead{"m,n,result", false, true}, header, "f.csv")->empty());
  auto other = csv_append_start(FileHead{"m,n,k,result", false, true}, header, "f.csv");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().code == Exit::bad_input);
  CHECK(other.error().message.find("f.csv has other columns") != std::string::npos);
  // A file cut short of its last line break still gets its rows on lines of their own.
  CHECK(*csv_append_start(FileHead{"m,n,result", false, false}, header, "f.csv") == "\n");
}

TEST_CASE("a --tags key or a percentile that repeats a column is refused", "[gemm][csv]") {
  const std::vector<std::pair<std::string, std::string>> tags = {{"gpu", "h200"}, {"m", "5"}};
  auto tag = check_csv_columns({"m", "n", "gpu", "m"}, tags);
  REQUIRE_FALSE(tag.ok());
  CHECK(tag.error().code == Exit::bad_input);
  CHECK(tag.error().message == "--tags: the key \"m\" is also a column gexec gemm writes; name the tag otherwise");
  auto pct = check_csv_columns({"p75_us", "p75_us"}, {});
  REQUIRE_FALSE(pct.ok());
  CHECK(pct.error().message.find("two columns \"p75_us\"") != std::string::npos);
  CHECK(check_csv_columns({"m", "n", "gpu"}, {{"gpu", "h200"}}).ok());
}

TEST_CASE("a range with step 0 names the step; the point cap has one wording", "[gemm][sweep]") {
  auto step = parse_sizes("8:16:0", "--m");
  REQUIRE_FALSE(step.ok());
  CHECK(step.error().message.find("--m: the range '8:16:0' has step 0") == 0);
  CHECK(step.error().message.find("out of range") == std::string::npos);
  auto range = parse_sizes("1:1000000:1", "--m");
  REQUIRE_FALSE(range.ok());
  CHECK(range.error().message.find("a sweep has at most 100000") != std::string::npos);
  GemmSweepText t;
  t.m = t.n = t.k = "1:100:1";
  auto product = expand_sweep(t);
  REQUIRE_FALSE(product.ok());
  CHECK(product.error().message.find("has 1000000 points; a sweep has at most 100000") != std::string::npos);
  t.k = "1";  // 10000 shapes, fine alone; 270000 points with the lists below
  t.dtype = "f16,bf16,f32";
  t.act = "none,relu,gelu";
  t.bias = "none,f16,f32";
  auto all = expand_sweep(t);
  REQUIRE_FALSE(all.ok());
  CHECK(all.error().message == "the sweep has 270000 points; a sweep has at most 100000 (split it into several sweeps)");
}

TEST_CASE("a non-finite --alpha is refused", "[gemm][sweep]") {
  for (double a : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
    GemmSweepText t;
    t.m = t.n = t.k = "32";
    t.alpha = a;
    auto r = expand_sweep(t);
    INFO(a);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.find("--alpha") == 0);
  }
}

TEST_CASE("--iters counts iterations: samples of at most the calibrated batch", "[timing]") {
  TimingOptions o;
  o.iters = 3;
  o.count_iterations = true;
  // A fast kernel calibrated at 50 per sample: 3 iterations are 3 samples of 1.
  auto p = plan_samples(o, 50);
  CHECK(p.reps == 1);
  CHECK(p.samples == 3);
  o.iters = 2000;
  p = plan_samples(o, 17);
  CHECK(p.reps == 17);
  CHECK(p.samples * p.reps >= 2000);
  CHECK(p.samples * p.reps < 2000 + 17);
  o.iters = 100;
  p = plan_samples(o, 50);  // at least kMinSamples samples where the count allows
  CHECK(p.reps == 100 / kMinSamples);
  CHECK(p.samples == kMinSamples);
  // Counting samples (the autotuner): iters samples of the batch.
  o.count_iterations = false;
  p = plan_samples(o, 50);
  CHECK(p.reps == 50);
  CHECK(p.samples == 100);
}

TEST_CASE("percentiles interpolate between ranks", "[timing]") {
  const std::vector<double> v = {4, 1, 3, 2, 5};
  CHECK(percentile(v, 50) == Approx(3));
  CHECK(percentile(v, 0) == Approx(1));
  CHECK(percentile(v, 100) == Approx(5));
  CHECK(percentile(v, 90) == Approx(4.6));
  CHECK(percentile({}, 50) == 0);
}
