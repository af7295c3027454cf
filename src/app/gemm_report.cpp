// `gexec gemm`'s rows as the table, the CSV and the JSON.
#include "gemm_report.hpp"

#include <cmath>
#include <cstdio>

#include "gexec/exec/timing.hpp"
#include "json_report.hpp"

namespace gexec::gemm_report {

using json = nlohmann::json;

std::string num(double v, const char* f) {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string opt_num(const std::optional<double>& v, const char* f) { return v ? num(*v, f) : ""; }

std::string point_label(const GemmPoint& p) {
  if (p.groups > 0)
    return "T " + std::to_string(p.m) + " G " + std::to_string(p.groups) + " " + p.routing + " " + std::to_string(p.n) +
           "x" + std::to_string(p.k) + " " + ab_name(p) + "->" + std::string(dtype_name(p.out_dtype)) + " bias " +
           bias_name(p) + " act " + std::string(act_name(p.act)) + " " + trans_name(p);
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
         (p.batch > 1 ? " batch " + std::to_string(p.batch) : "") + " " + ab_name(p) + "->" +
         std::string(dtype_name(p.out_dtype)) + " bias " + bias_name(p) + " act " + std::string(act_name(p.act)) +
         " " + trans_name(p);
}

std::string pct_name(double p) {
  std::string s = "p";  // appended, not "p" + ...: GCC 12 warns falsely (-Wrestrict) on that form
  s += num(p, "%g");
  return s;
}

namespace {

// Percentiles beyond the fixed median, p90 and p99 columns get their own.
std::vector<double> extra_percentiles(const std::vector<double>& pcts) {
  std::vector<double> out;
  for (double q : pcts)
    if (q != 50 && q != 90 && q != 99) out.push_back(q);
  return out;
}

std::string u(unsigned v) { return v ? std::to_string(v) : ""; }

}  // namespace

std::vector<std::string> csv_columns(const std::vector<double>& pcts,
                                     const std::vector<std::pair<std::string, std::string>>& tags) {
  std::vector<std::string> c = {"m", "n", "k", "batch", "dtype", "out_dtype", "bias", "act", "trans", "alpha",
                                "backend", "pad", "l2", "kernel", "algo_index", "algo_count", "algo", "samples",
                                "reps", "median_us", "p90_us", "p99_us"};
  for (double q : extra_percentiles(pcts)) c.push_back(pct_name(q) + "_us");
  for (const char* s : {"min_us", "cv", "tflops", "gbps", "peak_pct", "max_abs", "rel_fro", "sm_mhz_start",
                        "sm_mhz_end", "sm_mhz_min", "mem_mhz_start", "mem_mhz_end", "power_w_start", "power_w_end",
                        "power_w_max", "power_limit_w", "temp_c_start", "temp_c_end", "throttle", "result", "error",
                        "groups", "routing"})
    c.push_back(s);
  for (const auto& [k, v] : tags) c.push_back(k);
  return c;
}


std::vector<std::string> csv_fields(const GemmRow& r, const GemmOptions& opts, const std::vector<double>& pcts,
                                    const std::vector<std::pair<std::string, std::string>>& tags) {
  const GemmPoint& p = r.p;
  const RunTiming* t = r.timing ? &*r.timing : nullptr;
  std::vector<std::string> f = {std::to_string(p.m), std::to_string(p.n), std::to_string(p.k),
                                std::to_string(p.batch), ab_name(p),
                                std::string(dtype_name(p.out_dtype)), bias_name(p), std::string(act_name(p.act)),
                                trans_name(p), num(p.alpha, "%g"), r.backend, opts.run.pad, r.l2, r.kernel,
                                std::to_string(r.algo_index), std::to_string(r.algo_count), r.algo,
                                t ? std::to_string(t->stats.samples) : "", t ? std::to_string(t->info.reps) : "",
                                t ? num(t->stats.median, "%.3f") : "", t ? num(t->stats.p90, "%.3f") : "",
                                t ? num(t->stats.p99, "%.3f") : ""};
  const std::vector<double> extra = extra_percentiles(pcts);
  for (double q : extra) {
    std::string v;
    for (size_t i = 0; i < pcts.size() && t; ++i)
      if (pcts[i] == q) v = num(r.percentiles[i], "%.3f");
    f.push_back(v);
  }
  const auto& s = r.power.start;
  const auto& e = r.power.end;
  for (std::string v :
       {t ? num(t->stats.min, "%.3f") : "", t ? num(t->stats.cv, "%.4f") : "", t ? num(t->tflops, "%.2f") : "",
        t ? num(t->gbps, "%.1f") : "", t ? opt_num(t->peak_pct, "%.1f") : "", opt_num(r.max_abs, "%.3g"),
        opt_num(r.rel_fro, "%.3g"), s ? u(s->sm_mhz) : "", e ? u(e->sm_mhz) : "", s ? u(r.power.min_sm_mhz) : "",
        s ? u(s->mem_mhz) : "", e ? u(e->mem_mhz) : "", s ? num(s->power_w, "%.1f") : "",
        e ? num(e->power_w, "%.1f") : "", s ? num(r.power.max_power_w, "%.1f") : "",
        e ? num(e->power_limit_w, "%.0f") : "", s ? u(s->temp_c) : "", e ? u(e->temp_c) : "",
        s ? throttle_names(r.power.throttle_seen) : "", std::string(result_name(r.result)), r.error,
        std::to_string(p.groups), p.routing})
    f.push_back(std::move(v));
  for (const auto& [k, v] : tags) f.push_back(v);
  return f;
}

json row_json(const GemmRow& r, const GemmOptions& opts, const std::vector<double>& pcts) {
  const GemmPoint& p = r.p;
  json j = {{"m", p.m},
            {"groups", p.groups},
            {"routing", p.routing},
            {"n", p.n},
            {"k", p.k},
            {"batch", p.batch},
            {"dtype", ab_name(p)},
            {"out_dtype", dtype_name(p.out_dtype)},
            {"bias", bias_name(p)},
            {"act", act_name(p.act)},
            {"trans", trans_name(p)},
            {"alpha", p.alpha},
            {"backend", r.backend},
            {"pad", opts.run.pad},
            {"l2", r.l2},
            {"kernel", r.kernel},
            {"algo_index", r.algo_index},
            {"algo_count", r.algo_count},
            {"algo", r.algo},
            {"max_abs", r.max_abs ? finite_or_null(*r.max_abs) : json(nullptr)},
            {"rel_fro", r.rel_fro ? finite_or_null(*r.rel_fro) : json(nullptr)},
            {"result", result_name(r.result)},
            {"error", r.error},
            {"warnings", r.warnings},
            {"power", power_json(r.power)},
            {"command", r.command}};
  if (r.timing) {
    const RunTiming& t = *r.timing;
    j["samples"] = t.stats.samples;
    j["reps"] = t.info.reps;
    j["median_us"] = t.stats.median;
    j["p90_us"] = t.stats.p90;
    j["p99_us"] = t.stats.p99;
    j["min_us"] = t.stats.min;
    j["mean_us"] = t.stats.mean;
    j["cv"] = t.stats.cv;
    // The interquartile range over the median: the noise `gexec compare` allows for.
    const double med = t.stats.median;
    j["spread"] = med > 0 ? (percentile(t.samples, 75) - percentile(t.samples, 25)) / med : 0.0;
    j["tflops"] = t.tflops;
    j["gbps"] = t.gbps;
    j["peak_pct"] = t.peak_pct ? json(*t.peak_pct) : json(nullptr);
    j["peak_tflops"] = t.peak_tflops ? json(*t.peak_tflops) : json(nullptr);
    j["graph_used"] = t.graph_used;
    j["rotating_sets"] = t.rotating_sets;
    json q = json::object();
    for (size_t i = 0; i < pcts.size(); ++i) q[num(pcts[i], "%g")] = r.percentiles[i];
    j["percentiles_us"] = q;
  }
  return j;
}

// The table on stdout: a header once, then a line per point as it finishes.
void print_header(std::ostream& out, const std::vector<double>& pcts) {
  char line[512];
  std::string ps;
  for (double q : pcts) {
    char b[32];
    std::snprintf(b, sizeof b, " %9s", (pct_name(q) + "_us").c_str());
    ps += b;
  }
  std::snprintf(line, sizeof line, "%6s %6s %6s %5s %-5s %-5s %-5s %-5s %-2s %-4s %-22s %5s%s %6s %8s %8s %6s %9s %9s %6s %5s %-6s %s\n",
                "m", "n", "k", "batch", "dtype", "out", "bias", "act", "tr", "l2", "kernel", "algo", ps.c_str(), "cv",
                "tflops", "gbps", "peak%", "max_abs", "rel_fro", "sm_mhz", "watts", "result", "algo_config");
  out << line;
}

void print_row(std::ostream& out, const GemmRow& r) {
  const GemmPoint& p = r.p;
  const RunTiming* t = r.timing ? &*r.timing : nullptr;
  std::string ps;
  for (double v : r.percentiles) {
    char b[32];
    std::snprintf(b, sizeof b, " %9.3f", v);
    ps += b;
  }
  if (!t) ps = std::string(10 * 3, ' ');
  const std::string algo = r.algo_count > 1 ? std::to_string(r.algo_index) + "/" + std::to_string(r.algo_count) : "-";
  const std::string sm = r.power.end ? std::to_string(r.power.min_sm_mhz) : "-";
  const std::string watts = r.power.end ? num(r.power.max_power_w, "%.0f") : "-";
  // A grouped point: its G in the batch column ("G8") and its routing before the algorithm.
  const std::string batch = p.groups > 0 ? "G" + std::to_string(p.groups) : std::to_string(p.batch);
  const std::string config = p.groups > 0 ? "routing " + p.routing + (r.algo.empty() ? "" : " " + r.algo) : r.algo;
  char line[1024];
  std::snprintf(line, sizeof line,
                "%6lld %6lld %6lld %5s %-5s %-5s %-5s %-5s %-2s %-4s %-22s %5s%s %6s %8s %8s %6s %9s %9s %6s %5s %-6s %s\n",
                (long long)p.m, (long long)p.n, (long long)p.k, batch.c_str(),
                ab_name(p).c_str(), std::string(dtype_name(p.out_dtype)).c_str(),
                bias_name(p).c_str(), std::string(act_name(p.act)).c_str(), trans_name(p).c_str(), r.l2.c_str(),
                r.kernel.substr(0, 22).c_str(), algo.c_str(), ps.c_str(), t ? num(t->stats.cv * 100, "%.1f%%").c_str() : "-",
                t ? num(t->tflops, "%.2f").c_str() : "-", t ? num(t->gbps, "%.1f").c_str() : "-",
                t && t->peak_pct ? num(*t->peak_pct, "%.1f").c_str() : "-", opt_num(r.max_abs, "%.3g").c_str(),
                opt_num(r.rel_fro, "%.3g").c_str(), sm.c_str(), watts.c_str(), std::string(result_name(r.result)).c_str(), config.c_str());
  out << line;
  if (!r.error.empty()) out << "  error: " << r.error << "\n";
}

json options_json(const GemmOptions& o) {
  json j = common_options_json(o.run);
  j.update({{"m", o.sweep.m},
            {"n", o.sweep.n},
            {"k", o.sweep.k},
            {"batch", o.sweep.batch},
            {"dtype", o.sweep.dtype},
            {"out_dtype", o.sweep.out_dtype},
            {"bias", o.sweep.bias},
            {"act", o.sweep.act},
            {"trans", o.sweep.trans},
            {"alpha", o.sweep.alpha},
            {"fast_accum", o.sweep.fast_accum},
            {"dtype_b", o.sweep.dtype_b},
            {"op", o.sweep.op},
            {"shared_b", o.sweep.shared_b},
            {"layout", o.sweep.layout},
            {"residual", o.sweep.residual},
            {"beta", o.sweep.beta ? json(*o.sweep.beta) : json(nullptr)},
            {"amax", o.sweep.amax},
            {"scale_a", o.sweep.scale_a},
            {"scale_b", o.sweep.scale_b},
            {"scale_c", o.sweep.scale_c},
            {"constant", o.sweep.constant},
            {"from", o.from},
            {"tuning_cache", o.run.tuning_cache},
            {"precision", o.run.precision},
            {"cold_l2", o.cold_l2},
            {"rotating_mb", o.rotating_mb},
            {"percentiles", o.percentiles},
            {"tags", o.tags}});
  return j;
}

}  // namespace gexec::gemm_report
