// `gexec compare`: the verdicts on synthetic results (identical, clearly slower, within the noise,
// failed, missing), both file formats, and NVML's absence and warnings.
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "gexec/app/gemm_command.hpp"
#include "gexec/app/nvml.hpp"

using namespace gexec;
using nlohmann::json;

namespace {

// `spread` is the interquartile range over the median, the noise compare allows for.
json point(int64_t m, double median, double spread, const char* result = "pass") {
  return {{"m", m},         {"n", 96},       {"k", 80},          {"batch", 1},         {"dtype", "f16"},
          {"out_dtype", "f16"}, {"bias", "f32"}, {"act", "relu"},    {"trans", "nn"},      {"l2", "warm"},
          {"backend", "cuda"},  {"median_us", median}, {"spread", spread}, {"cv", 3 * spread}, {"result", result}};
}

std::string gemm_doc(std::vector<json> points) {
  return json{{"format", "gexec.gemm"}, {"version", 1}, {"points", points}}.dump();
}

std::vector<CompareRow> compare(const std::string& a, const std::string& b, double threshold = 0.05) {
  CompareOptions o;
  o.base = "base.json";
  o.next = "new.json";
  o.threshold = threshold;
  auto r = compare_documents(a, b, o);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("compare: identical results are the same everywhere", "[compare]") {
  const std::string doc = gemm_doc({point(64, 10.0, 0.02), point(128, 20.0, 0.01)});
  const auto rows = compare(doc, doc);
  REQUIRE(rows.size() == 2);
  for (const CompareRow& r : rows) {
    CHECK(r.verdict == "same");
    CHECK(r.ratio == Approx(1.0));
  }
}

TEST_CASE("compare: a clearly slower point is SLOW, a clearly faster one FAST", "[compare]") {
  const auto rows = compare(gemm_doc({point(64, 10.0, 0.02), point(128, 20.0, 0.02)}),
                            gemm_doc({point(64, 25.0, 0.02), point(128, 10.0, 0.02)}));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].verdict == "SLOW");
  CHECK(rows[0].ratio == Approx(2.5));
  CHECK(rows[1].verdict == "FAST");
}

TEST_CASE("compare: the band widens with the measured noise", "[compare]") {
  // 8% slower: beyond a 5% threshold on quiet runs, within the noise of runs with a 10% spread.
  CHECK(compare(gemm_doc({point(64, 10.0, 0.005)}), gemm_doc({point(64, 10.8, 0.005)}))[0].verdict == "SLOW");
  const auto noisy = compare(gemm_doc({point(64, 10.0, 0.10)}), gemm_doc({point(64, 10.8, 0.10)}));
  CHECK(noisy[0].verdict == "same");
  CHECK(noisy[0].noise > 0.2);
  // Small reruns' drift (2%) is no regression at the default threshold.
  CHECK(compare(gemm_doc({point(64, 10.0, 0.0)}), gemm_doc({point(64, 10.2, 0.0)}))[0].verdict == "same");
  CHECK(compare(gemm_doc({point(64, 10.0, 0.0)}), gemm_doc({point(64, 10.2, 0.0)}), 0.01)[0].verdict == "SLOW");
}

TEST_CASE("compare: failed, missing and new points", "[compare]") {
  const auto rows = compare(gemm_doc({point(64, 10.0, 0.01), point(128, 10.0, 0.01)}),
                            gemm_doc({point(64, 10.0, 0.01, "fail"), point(256, 10.0, 0.01)}));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].verdict == "FAILED");
  CHECK(rows[1].verdict == "missing");
  CHECK(rows[2].verdict == "new");
}

TEST_CASE("compare: run reports, the run and each profiled op", "[compare]") {
  auto report = [](double run_us, double op_us) {
    return json{{"format", "gexec.report"},
                {"result", "pass"},
                {"graph", {{"name", "mlp"}}},
                {"timing", {{"median_us", run_us}, {"cv", 0.01}, {"ops", {{{"name", "fc1"}, {"median_us", op_us}}}}}}}
        .dump();
  };
  const auto rows = compare(report(100, 40), report(101, 90));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].key == "run mlp");
  CHECK(rows[0].verdict == "same");
  CHECK(rows[1].key == "op fc1");
  CHECK(rows[1].verdict == "SLOW");
}

TEST_CASE("compare: a file of neither format is bad input", "[compare]") {
  CompareOptions o;
  o.base = "a.json";
  o.next = "b.json";
  for (const std::string& bad : {std::string("not json"), std::string("{\"format\": \"other\"}"), std::string("[1, 2]"),
                                std::string("{\"format\": \"gexec.report\", \"result\": \"pass\"}")}) {
    INFO(bad);
    auto r = compare_documents(bad, gemm_doc({}), o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.rfind("a.json", 0) == 0);
  }
}

TEST_CASE("NVML absent: unavailable with the reason, and no readings", "[nvml]") {
  Nvml nvml("/nonexistent/libnvidia-ml.so.1");
  CHECK_FALSE(nvml.available());
  CHECK(nvml.why_unavailable().find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
  CHECK_FALSE(nvml.sample(0).has_value());
  CHECK(nvml.driver().empty());
  CHECK(nvml.uuid(0).empty());
  PowerWatch watch(nvml, 0);
  watch.start();
  const PointPower p = watch.stop();
  CHECK_FALSE(p.start.has_value());
  CHECK_FALSE(p.end.has_value());
  CHECK(p.warnings().empty());
  CHECK(power_json(p)["start"].is_null());
}

TEST_CASE("NVML readings: a falling clock and the power limit are warned about", "[nvml]") {
  PointPower p;
  p.start = GpuSample{1980, 3201, 400, 700, 50, 0};
  p.end = GpuSample{1980, 3201, 500, 700, 60, 0};
  p.min_sm_mhz = 1965;
  p.max_power_w = 520;
  CHECK(p.warnings().empty());  // a boost step is no fall
  p.min_sm_mhz = 1650;
  p.end->sm_mhz = 1700;
  p.throttle_seen = 0x4;
  p.max_power_w = 699;
  const auto w = p.warnings();
  REQUIRE(w.size() == 2);
  CHECK(w[0].find("fell from 1980 to 1650 MHz") != std::string::npos);
  CHECK(w[1].find("power limit") != std::string::npos);
  CHECK(throttle_names(0x4 | 0x40) == "sw_power_cap,hw_thermal");
  CHECK(throttle_names(0) == "none");
  CHECK(power_capped(0x80));
  CHECK_FALSE(power_capped(0x1));
}
