// `gexec compare`: the verdicts on synthetic results (identical, clearly slower, within the noise,
// failed, missing), both file formats, and NVML's absence and warnings.
#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "gexec/app/compare.hpp"
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
  auto r = compare_documents(a, b, "base.json", "new.json", threshold);
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

TEST_CASE("compare: grouped points (gemm --groups) of other G or routing are other points", "[compare][grouped]") {
  auto grouped = [](int64_t g, const char* routing, double median) {
    json p = point(512, median, 0.01);
    p["groups"] = g, p["routing"] = routing;
    return p;
  };
  // The same T, N and K over 4 and 64 experts, and one routing against another: four points,
  // each matched with its own; a plain product of the same sizes is a fifth.
  const std::string doc = gemm_doc({grouped(4, "uniform", 10), grouped(64, "uniform", 60), grouped(4, "zipf:1.2", 15),
                                    point(512, 5, 0.01)});
  const auto rows = compare(doc, doc);
  REQUIRE(rows.size() == 4);
  for (const CompareRow& r : rows) CHECK(r.verdict == "same");
  const auto moved = compare(doc, gemm_doc({grouped(64, "uniform", 10)}));
  int missing = 0, fast = 0;
  for (const CompareRow& r : moved) missing += r.verdict == "missing", fast += r.verdict == "FAST";
  CHECK(missing == 3);
  CHECK(fast == 1);  // G 64 at 10 us against its own 60, not against G 4's 10 (which would be "same")
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
                {"version", 2},
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
  for (const std::string& bad : {std::string("not json"), std::string("{\"format\": \"other\"}"), std::string("[1, 2]"),
                                std::string("{\"format\": \"gexec.report\", \"result\": \"pass\"}")}) {
    INFO(bad);
    auto r = compare_documents(bad, gemm_doc({}), "a.json", "b.json", 0.05);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.rfind("a.json", 0) == 0);
  }
}

TEST_CASE("compare: what cannot be compared is refused with the file and the JSON path", "[compare]") {
  const std::string good = gemm_doc({point(64, 10.0, 0.01)});
  auto refused = [&](const std::string& bad, const std::string& want) {
    INFO(bad << "\nwanted: " << want);
    auto r = compare_documents(bad, good, "a.json", "b.json", 0.05);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Exit::bad_input);
    CHECK(r.error().message.rfind("a.json: ", 0) == 0);
    CHECK(r.error().message.find(want) != std::string::npos);
  };
  refused(json{{"format", "gexec.gemm"}, {"version", 1}}.dump(), "a.json: /points: missing");
  refused(json{{"format", "gexec.gemm"}, {"version", 99}, {"points", json::array()}}.dump(),
          "a.json: /version: is 99; this gexec reads gexec.gemm versions 1 to 1");
  refused(json{{"format", "gexec.gemm"}, {"points", json::array()}}.dump(), "/version: missing");
  refused(json{{"format", "gexec.gemm"}, {"version", 1}, {"points", 3}}.dump(), "/points: is not an array");
  refused(gemm_doc({point(64, 10.0, 0.01), point(128, 10.0, -0.5)}), "a.json: /points/1: spread: is -0.5");
  refused(gemm_doc({point(64, -10.0, 0.01)}), "/points/0: median_us: is -10");
  refused(gemm_doc({point(64, 10.0, 0.01), point(128, 10.0, 0.01), point(64, 12.0, 0.01)}),
          "a.json: /points/2: the same point as /points/0");
  json no_m = point(64, 10.0, 0.01);
  no_m.erase("m");
  refused(gemm_doc({no_m}), "/points/0: m: missing");
  refused(gemm_doc({json(7)}), "/points/0: is not an object");
  // A size beyond int64_t is a key like any other (not a cast out of range).
  json huge = point(64, 10.0, 0.01);
  huge["m"] = std::numeric_limits<uint64_t>::max();
  const auto rows = compare(gemm_doc({huge}), gemm_doc({huge}));
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].key.rfind("1.8446744073709552e+19x96x80 ", 0) == 0);
  // Every problem, one line each.
  auto many = compare_documents(gemm_doc({point(64, 1, -1), point(64, 1, -1)}), good, "a.json", "b.json", 0.05);
  REQUIRE_FALSE(many.ok());
  CHECK(std::count(many.error().message.begin(), many.error().message.end(), '\n') == 1);
  // A gemm file against a run report: every row would be missing or new.
  const std::string report = json{{"format", "gexec.report"}, {"version", 2}, {"result", "pass"},
                                  {"graph", {{"name", "g"}}}, {"timing", {{"median_us", 5.0}, {"cv", 0.01}}}}
                                 .dump();
  auto mixed = compare_documents(good, report, "a.json", "b.json", 0.05);
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().code == Exit::bad_input);
  CHECK(mixed.error().message.find("compare files of the same kind") != std::string::npos);
  // A report with two profiled ops of one name, or a p90 below its median.
  auto ops = json::parse(report);
  ops["timing"]["ops"] = {{{"name", "fc"}, {"median_us", 1.0}}, {{"name", "fc"}, {"median_us", 2.0}}};
  auto twice = compare_documents(ops.dump(), report, "a.json", "b.json", 0.05);
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().message.find("a.json: /timing/ops/1: the same op as /timing/ops/0") != std::string::npos);
}

TEST_CASE("compare reports: text, Markdown and JSON list every row with its verdict and a summary", "[compare]") {
  // 64 slower, 128 the same, 256 only in BASE, 512 only in NEW, 1024 failed its check in NEW.
  const std::string base = gemm_doc({point(64, 10, 0.01), point(128, 20, 0.01), point(256, 30, 0.01),
                                     point(1024, 40, 0.01)});
  const std::string next = gemm_doc({point(64, 25, 0.01), point(128, 20, 0.01), point(512, 5, 0.01),
                                     point(1024, 40, 0.01, "fail")});
  auto rows = compare_documents(base, next, "base.json", "new.json", 0.05);
  REQUIRE(rows.ok());
  const std::vector<Comparison> cs{{"base.json", "new.json", *rows}, {"base.json", "same.json", compare(base, base)}};
  const CompareCounts n = count_verdicts(cs[0]);
  CHECK(n.slower == 1);
  CHECK(n.same == 1);
  CHECK(n.missing == 1);
  CHECK(n.added == 1);
  CHECK(n.failed == 1);
  CHECK(count_verdicts(cs[1]).same == 4);

  const std::string text = compare_text(cs, 0.05);
  CHECK(text.find("== new.json against base.json") != std::string::npos);
  CHECK(text.find("== same.json against base.json") != std::string::npos);
  CHECK(text.find("5 rows: 0 faster, 1 slower, 1 same, 1 failed the check, 0 untimed, 1 only in BASE, 1 only in NEW") !=
        std::string::npos);

  const std::string md = compare_markdown(cs, 0.05);
  CHECK(md.find("| point | base (us) | new (us) | ratio | band | verdict |") != std::string::npos);
  CHECK(md.find("| 2.500 | 5.0% | **SLOW** |") != std::string::npos);
  CHECK(md.find("| 30.000 |  |  |  | missing |") != std::string::npos);  // no NEW time, no ratio
  CHECK(md.find("|  | 5.000 |  |  | new |") != std::string::npos);

  const json doc = json::parse(compare_json(cs, 0.05));
  CHECK(doc["format"] == "gexec.compare");
  CHECK(doc["base"] == "base.json");
  REQUIRE(doc["comparisons"].size() == 2);
  const json& first = doc["comparisons"][0];
  CHECK(first["new"] == "new.json");
  CHECK(first["summary"]["slower"] == 1);
  CHECK(first["summary"]["only_in_base"] == 1);
  CHECK(first["summary"]["only_in_new"] == 1);
  REQUIRE(first["rows"].size() == 5);
  CHECK(first["rows"][0]["ratio"] == Approx(2.5));
  CHECK(first["rows"][2]["new_us"].is_null());
  CHECK(first["rows"][4]["base_us"].is_null());
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
