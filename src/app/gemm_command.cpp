// `gexec gemm`: for each point of the sweep, its graph built in memory and run through
// run_graph (the same path as `gexec run`: passes, selection, execution, reference check,
// timing), NVML read around the timing, one row into the table, the CSV and the JSON.
#include "gexec/app/gemm_command.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "gexec/exec/rotation.hpp"
#include "gexec/app/csv.hpp"
#include "json_report.hpp"
#include "gexec/app/nvml.hpp"
#include "gexec/io/append_file.hpp"
#include "gexec/io/text.hpp"
#include "output_file.hpp"
#include "output_paths.hpp"
#include "progress.hpp"

namespace gexec {
namespace {

using json = nlohmann::json;

// One point's outcome.
struct Row {
  GemmPoint p;
  std::string backend, kernel, algo, l2 = "warm", result = "error", error;
  int algo_index = 0, algo_count = 0;
  std::optional<RunTiming> timing;
  std::vector<double> percentiles;  // per requested percentile
  std::optional<double> max_abs, rel_fro;
  PointPower power;
  std::vector<std::string> warnings;
  bool noisy = false;  // cv above kNoisyCv
  bool passed() const { return result == "pass"; }
};

std::string num(double v, const char* f = "%.4g") {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string opt_num(const std::optional<double>& v, const char* f = "%.4g") { return v ? num(*v, f) : ""; }

std::string point_label(const GemmPoint& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
         (p.batch > 1 ? " batch " + std::to_string(p.batch) : "") + " " + std::string(dtype_name(p.dtype)) + "->" +
         std::string(dtype_name(p.out_dtype)) + " bias " + bias_name(p) + " act " + std::string(act_name(p.act)) +
         " " + trans_name(p);
}

Result<std::vector<double>> parse_percentiles(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !(v >= 0 && v <= 100))
      return bad_input("--percentile: '" + part + "' is not a number from 0 to 100");
    out.push_back(v);
  }
  if (out.empty()) return bad_input("--percentile: empty");
  return out;
}

std::string pct_name(double p) {
  std::string s = "p";  // appended, not "p" + ...: GCC 12 warns falsely (-Wrestrict) on that form
  s += num(p, "%g");
  return s;
}

// The run's kernel for the GEMM: its name, and the candidate it runs.
void read_kernel(const RunReport& rep, Row& row) {
  if (!rep.kernels) return;
  for (const KernelChoice& c : *rep.kernels) {
    if (c.hoisted) continue;
    row.kernel = c.kernel;
    row.algo = c.algo;
    row.algo_index = c.variant;
    row.algo_count = c.variants;
    return;
  }
}

Row run_point(const GemmOptions& opts, const RunOptions& base, const GemmPoint& p,
              const std::vector<double>& pcts) {
  Row row;
  row.p = p;
  RunOptions o = base;
  o.graph = std::make_shared<const Graph>(gemm_graph(p));
  o.graph_path = "gemm " + point_label(p);
  o.report_path.clear();
  if (opts.cold_l2 || opts.rotating_mb > 0)
    o.timing.rotate_bytes = opts.rotating_mb > 0 ? int64_t(opts.rotating_mb * 1e6) : kDefaultRotateBytes;
  Nvml& nvml = Nvml::instance();
  PowerWatch watch(nvml, o.device);
  bool watching = false;
  // The check is done and the timing starts next: the readings frame the timed part only.
  const auto observer = [&](const RunReport& r) {
    if (watching || !r.check || !r.check->compared || o.timing.iters <= 0) return;
    if (!r.device || r.device->backend != Backend::cuda) return;
    watch.start();
    watching = true;
  };
  const RunReport rep = run_graph(o, observer);
  row.power = watch.stop();
  if (rep.device) row.backend = std::string(backend_name(rep.device->backend));
  read_kernel(rep, row);
  row.result = std::string(result_name(rep.result));
  if (rep.error) row.error = rep.error->message;
  if (rep.check && !rep.check->outputs.empty()) {
    row.max_abs = rep.check->outputs.front().check.max_abs;
    row.rel_fro = rep.check->outputs.front().check.rel_fro;
  }
  if (rep.timing) {
    row.timing = *rep.timing;
    row.l2 = rep.timing->cold_l2 ? "cold" : "warm";
    for (double q : pcts) row.percentiles.push_back(percentile(rep.timing->samples, q));
    if (!rep.timing->rotation_note.empty()) row.warnings.push_back(rep.timing->rotation_note);
  }
  for (const RunWarning& w : rep.warnings) {
    if (w.kind == RunWarning::Kind::noisy_timings) row.noisy = true;  // the cv column says it; counted at the end
    else if (w.kind == RunWarning::Kind::peak_unknown) spdlog::debug("peak unknown: {}", w.message);  // peak% "-"
    else row.warnings.push_back(w.message);
  }
  for (std::string& w : row.power.warnings()) row.warnings.push_back(std::move(w));
  return row;
}

// Percentiles beyond the fixed median, p90 and p99 columns get their own.
std::vector<double> extra_percentiles(const std::vector<double>& pcts) {
  std::vector<double> out;
  for (double q : pcts)
    if (q != 50 && q != 90 && q != 99) out.push_back(q);
  return out;
}

std::vector<std::string> csv_columns(const std::vector<double>& pcts,
                                     const std::vector<std::pair<std::string, std::string>>& tags) {
  std::vector<std::string> c = {"m", "n", "k", "batch", "dtype", "out_dtype", "bias", "act", "trans", "alpha",
                                "backend", "pad", "l2", "kernel", "algo_index", "algo_count", "algo", "samples",
                                "reps", "median_us", "p90_us", "p99_us"};
  for (double q : extra_percentiles(pcts)) c.push_back(pct_name(q) + "_us");
  for (const char* s : {"min_us", "cv", "tflops", "gbps", "peak_pct", "max_abs", "rel_fro", "sm_mhz_start",
                        "sm_mhz_end", "sm_mhz_min", "mem_mhz_start", "mem_mhz_end", "power_w_start", "power_w_end",
                        "power_w_max", "power_limit_w", "temp_c_start", "temp_c_end", "throttle", "result", "error"})
    c.push_back(s);
  for (const auto& [k, v] : tags) c.push_back(k);
  return c;
}

std::string u(unsigned v) { return v ? std::to_string(v) : ""; }

std::vector<std::string> csv_fields(const Row& r, const GemmOptions& opts, const std::vector<double>& pcts,
                                    const std::vector<std::pair<std::string, std::string>>& tags) {
  const GemmPoint& p = r.p;
  const RunTiming* t = r.timing ? &*r.timing : nullptr;
  std::vector<std::string> f = {std::to_string(p.m), std::to_string(p.n), std::to_string(p.k),
                                std::to_string(p.batch), std::string(dtype_name(p.dtype)),
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
        s ? throttle_names(r.power.throttle_seen) : "", r.result, r.error})
    f.push_back(std::move(v));
  for (const auto& [k, v] : tags) f.push_back(v);
  return f;
}

json row_json(const Row& r, const GemmOptions& opts, const std::vector<double>& pcts) {
  const GemmPoint& p = r.p;
  json j = {{"m", p.m},
            {"n", p.n},
            {"k", p.k},
            {"batch", p.batch},
            {"dtype", dtype_name(p.dtype)},
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
            {"result", r.result},
            {"error", r.error},
            {"warnings", r.warnings},
            {"power", power_json(r.power)}};
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

void print_row(std::ostream& out, const Row& r) {
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
  char line[1024];
  std::snprintf(line, sizeof line,
                "%6lld %6lld %6lld %5lld %-5s %-5s %-5s %-5s %-2s %-4s %-22s %5s%s %6s %8s %8s %6s %9s %9s %6s %5s %-6s %s\n",
                (long long)p.m, (long long)p.n, (long long)p.k, (long long)p.batch,
                std::string(dtype_name(p.dtype)).c_str(), std::string(dtype_name(p.out_dtype)).c_str(),
                bias_name(p).c_str(), std::string(act_name(p.act)).c_str(), trans_name(p).c_str(), r.l2.c_str(),
                r.kernel.substr(0, 22).c_str(), algo.c_str(), ps.c_str(), t ? num(t->stats.cv * 100, "%.1f%%").c_str() : "-",
                t ? num(t->tflops, "%.2f").c_str() : "-", t ? num(t->gbps, "%.1f").c_str() : "-",
                t && t->peak_pct ? num(*t->peak_pct, "%.1f").c_str() : "-", opt_num(r.max_abs, "%.3g").c_str(),
                opt_num(r.rel_fro, "%.3g").c_str(), sm.c_str(), watts.c_str(), r.result.c_str(), r.algo.c_str());
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
            {"cold_l2", o.cold_l2},
            {"rotating_mb", o.rotating_mb},
            {"percentiles", o.percentiles},
            {"tags", o.tags}});
  return j;
}

}  // namespace

Exit gemm_command(const GemmOptions& opts, std::ostream& json_out, std::ostream& err) {
  // --json -: the JSON alone on stdout, the table on stderr.
  std::ostream& out = opts.json_path == "-" ? err : json_out;
  // Everything that can be wrong with the options is found before the first point runs.
  auto points = expand_sweep(opts.sweep);
  if (!points) {
    err << "gexec: " << points.error().message << "\n";
    return points.error().code;
  }
  auto pcts = parse_percentiles(opts.percentiles);
  auto tags = parse_tags(opts.tags);
  for (const Error* e : {pcts ? nullptr : &pcts.error(), tags ? nullptr : &tags.error()})
    if (e) {
      err << "gexec: " << e->message << "\n";
      return e->code;
    }
  if (opts.rotating_mb < 0) {
    err << "gexec: --rotating: a size in MB above 0\n";
    return Exit::bad_input;
  }
  // The output files can be written, and are different files: known now, not after the sweep
  // (output_paths.hpp). The --dump folder is checked by each point's run before it runs.
  if (Status s = check_output_files({{"--csv", opts.csv_path}, {"--json", opts.json_path}, {"--export-times", opts.export_times}});
      !s) {
    err << "gexec: " << s.error().message << "\n";
    return s.error().code;
  }
  const std::vector<std::string> columns = csv_columns(*pcts, *tags);
  if (Status s = check_csv_columns(columns, *tags); !s) {
    err << "gexec: " << s.error().message << "\n";
    return s.error().code;
  }
  // The CSV grows by a whole row as each point ends (io/append_file.hpp): an interrupted sweep
  // keeps the rows it finished, and sweeps appending to one file at once lose none.
  const std::string header = csv_line(columns);
  std::optional<AppendFile> csv;
  if (!opts.csv_path.empty() && opts.csv_path != "-") {
    auto f = opts.append ? AppendFile::extend(opts.csv_path,
                                              [&](const FileHead& head) {
                                                return csv_append_start(head, header, opts.csv_path);
                                              })
                         : AppendFile::replace(opts.csv_path, header);
    if (!f) {
      err << "gexec: " << (f.error().code == Exit::bad_input ? "" : "--csv: ") << f.error().message << "\n";
      return f.error().code;
    }
    csv.emplace(std::move(*f));
  }
  const auto write_csv = [&](const std::string& text) -> Status {
    // The table first: --csv /dev/stdout writes on the same descriptor.
    out.flush();
    std::fflush(stdout);
    if (csv) return csv->append(text);
    if (opts.csv_path == "-") out << text << std::flush;
    return {};
  };
  if (opts.csv_path == "-") (void)write_csv(header);
  // Said once, terminal or not (the progress bar shows only on a terminal); -q silences it.
  if (opts.progress)
    err << "gexec: gemm: " << points->size() << " point" << (points->size() == 1 ? "" : "s") << " to run\n";
  // Until --pad reaches the kernels as an option, it reaches them as the variable they read.
  if (opts.run.pad == "never") setenv("GEXEC_PAD", "0", 1);
  else if (opts.run.pad == "always") setenv("GEXEC_PAD", "1", 1);
  else unsetenv("GEXEC_PAD");

  RunOptions base = opts.run;
  std::vector<Row> rows;
  std::set<std::string> warned;
  json exported = json::array();
  std::string times_csv = "point,m,n,k,batch,dtype,bias,act,trans,l2,sample,us\n";
  Progress bar("gemm: " + std::to_string(points->size()) + " points", 1.0, opts.progress);
  print_header(out, *pcts);
  for (size_t i = 0; i < points->size(); ++i) {
    bar.update(double(i) / double(points->size()));
    Row row = run_point(opts, base, (*points)[i], *pcts);
    // The peak is measured (or read from its cache) once, not per point.
    if (!base.peak_tflops && row.timing && row.timing->peak_tflops) base.peak_tflops = row.timing->peak_tflops;
    bar.clear();
    print_row(out, row);
    out.flush();
    for (const std::string& w : row.warnings) {
      // Power and clock warnings belong to their point; the others are said once.
      const bool per_point = w.rfind("the SM clock", 0) == 0 || w.rfind("the power limit", 0) == 0;
      if (per_point) spdlog::warn("{}: {}", point_label(row.p), w);
      else if (warned.insert(w).second) spdlog::warn("{}", w);
    }
    if (row.timing && !opts.export_times.empty()) {
      const GemmPoint& p = row.p;
      const std::string key = std::to_string(i) + "," + std::to_string(p.m) + "," + std::to_string(p.n) + "," +
                              std::to_string(p.k) + "," + std::to_string(p.batch) + "," +
                              std::string(dtype_name(p.dtype)) + "," + bias_name(p) + "," +
                              std::string(act_name(p.act)) + "," + trans_name(p) + "," + row.l2 + ",";
      for (size_t s = 0; s < row.timing->samples.size(); ++s)
        times_csv += key + std::to_string(s) + "," + num(row.timing->samples[s], "%.4f") + "\n";
    }
    if (Status s = write_csv(csv_line(csv_fields(row, opts, *pcts, *tags))); !s) {
      err << "gexec: --csv: " << s.error().message << "\n";
      return Exit::runtime;
    }
    rows.push_back(std::move(row));
  }
  bar.clear();

  int failed = 0, noisy = 0;
  for (const Row& r : rows) failed += r.passed() ? 0 : 1, noisy += r.noisy ? 1 : 0;
  if (noisy) {
    const std::string w = std::to_string(noisy) + " of " + std::to_string(rows.size()) +
                          " points have noisy timings (cv above " + num(kNoisyCv * 100, "%.0f") +
                          "%); the device may be shared, throttling or changing clocks; compare medians with care";
    spdlog::warn("{}", w);
    warned.insert(w);
  }
  out << rows.size() << " point" << (rows.size() == 1 ? "" : "s") << ", " << rows.size() - size_t(failed)
      << " passed" << (failed ? ", " + std::to_string(failed) + " failed" : "") << "\n";

  Status written;
  if (!opts.json_path.empty()) {
    json doc = {{"format", "gexec.gemm"}, {"version", 1}, {"command_line", opts.run.command_line},
                {"options", options_json(opts)}, {"environment", environment_json(opts.run.device)}};
    json pts = json::array();
    for (const Row& r : rows) pts.push_back(row_json(r, opts, *pcts));
    doc["points"] = pts;
    json ws = json::array();
    for (const std::string& w : warned) ws.push_back(w);
    doc["warnings"] = ws;
    doc["result"] = failed ? "fail" : "pass";
    written = write_output_file(opts.json_path, dump_json(doc, 2) + "\n", &json_out);
    if (!written) err << "gexec: --json: " << written.error().message << "\n";
  }
  if (written && !opts.export_times.empty()) {
    written = write_output_file(opts.export_times, times_csv, &out);
    if (!written) err << "gexec: --export-times: " << written.error().message << "\n";
  }
  if (failed) return Exit::check_failed;
  return written ? Exit::ok : Exit::runtime;
}

}  // namespace gexec
