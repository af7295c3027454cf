// `gexec gemm`: for each point of the sweep, its graph built in memory and run through
// run_graph (the same path as `gexec run`: passes, selection, execution, reference check,
// timing), NVML read around the timing, one row into the table, the CSV and the JSON (rendered
// by gemm_report.cpp).
#include "gexec/app/gemm_command.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "gemm_report.hpp"
#include "gexec/app/csv.hpp"
#include "gexec/app/gemm_replay.hpp"
#include "gexec/app/nvml.hpp"
#include "gexec/exec/rotation.hpp"
#include "gexec/io/append_file.hpp"
#include "gexec/io/text.hpp"
#include "json_report.hpp"
#include "output_file.hpp"
#include "output_paths.hpp"
#include "interrupt.hpp"
#include "progress.hpp"

namespace gexec {
namespace {

using json = nlohmann::json;
using namespace gemm_report;

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

// The run's kernel for the GEMM: its name, and the candidate it runs.
void read_kernel(const RunReport& rep, GemmRow& row) {
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

GemmRow run_point(const GemmOptions& opts, const RunOptions& base, const GemmJob& job,
              const std::vector<double>& pcts) {
  const GemmPoint& p = job.point;
  GemmRow row;
  row.p = p;
  RunOptions o = base;
  // A replay line's own run options; with --autotune the tuner chooses the candidate.
  if (job.run.algo && !o.autotune) o.algo = job.run.algo;
  if (job.run.pad) o.pad = *job.run.pad;
  if (job.run.precision) o.precision = *job.run.precision;
  o.graph = std::make_shared<const Graph>(gemm_graph(p));
  o.graph_path = "gemm " + point_label(p);
  o.report_path.clear();
  o.timing.rotate_bytes = rotation_bytes(opts.cold_l2, opts.rotating_mb);
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
  row.interrupted = rep.error && rep.error->code == Exit::interrupted;
  row.power = watch.stop();
  if (rep.device) row.backend = std::string(backend_name(rep.device->backend));
  read_kernel(rep, row);
  row.result = rep.result;
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
  ReplayRun ran{row.algo_count > 1 ? std::optional<int>(row.algo_index) : std::nullopt,
                o.pad, o.precision};
  row.command = gemm_command_line(p, ran);
  return row;
}

// The points: the sweep's, or every line's of a --from file (not both).
Result<std::vector<GemmJob>> sweep_jobs(const GemmOptions& opts) {
  if (!opts.from.empty()) {
    if (opts.sweep != GemmSweepText{})
      return bad_input("--from: the points come from the file; give no sweep option (--m, --dtype, ...) beside it");
    return read_gemm_file(opts.from);
  }
  auto points = expand_sweep(opts.sweep);
  if (!points) return points.error();
  std::vector<GemmJob> jobs;
  jobs.reserve(points->size());
  for (GemmPoint& p : *points) jobs.push_back({std::move(p), {}, {}});
  return jobs;
}

}  // namespace

Exit gemm_command(const GemmOptions& opts, std::ostream& json_out, std::ostream& err) {
  // --json -: the JSON alone on stdout, the table on stderr.
  std::ostream& out = opts.json_path == "-" ? err : json_out;
  // Everything that can be wrong with the options is found before the first point runs.
  auto points = sweep_jobs(opts);
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
  std::map<std::string, std::string> forced;  // --kernel: a name the table lacks is usage, before any point
  for (const std::string& k : opts.run.kernels)
    if (Status s = parse_forced_kernel(k, forced); !s) {
      err << "gexec: " << s.error().message << "\n";
      return s.error().code;
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

  RunOptions base = opts.run;
  std::vector<GemmRow> rows;
  std::set<std::string> warned;
  json exported = json::array();
  std::string times_csv = "point,m,n,k,batch,dtype,bias,act,trans,l2,sample,us\n";
  // Ctrl-C stops the sweep between points (or the point's timing between samples): the rows of
  // the points finished are kept, in the CSV as they are and in the JSON written below.
  const StopOnInterrupt stop;
  base.timing.poll = check_interrupt;
  Progress bar("gemm", 1.0, opts.progress);
  print_header(out, *pcts);
  bool interrupted = false;
  for (size_t i = 0; i < points->size(); ++i) {
    bar.update(int64_t(i), int64_t(points->size()));
    if (interrupt_requested()) {
      interrupted = true;
      break;
    }
    GemmRow row = run_point(opts, base, (*points)[i], *pcts);
    if (row.interrupted) {
      interrupted = true;
      break;
    }
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
                              ab_name(p) + "," + bias_name(p) + "," +
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
  for (const GemmRow& r : rows) failed += r.passed() ? 0 : 1, noisy += r.noisy ? 1 : 0;
  if (noisy) {
    const std::string w = std::to_string(noisy) + " of " + std::to_string(rows.size()) +
                          " points have noisy timings (cv above " + num(kNoisyCv * 100, "%.0f") +
                          "%); the device may be shared, throttling or changing clocks; compare medians with care";
    spdlog::warn("{}", w);
    warned.insert(w);
  }
  out << rows.size() << " point" << (rows.size() == 1 ? "" : "s") << ", " << rows.size() - size_t(failed)
      << " passed" << (failed ? ", " + std::to_string(failed) + " failed" : "")
      << (interrupted ? " (interrupted: " + std::to_string(points->size() - rows.size()) + " not run)" : "") << "\n";

  Status written;
  if (!opts.json_path.empty()) {
    json doc = {{"format", "gexec.gemm"}, {"version", 1}, {"command_line", opts.run.command_line},
                {"options", options_json(opts)}, {"environment", environment_json(opts.run.device)}};
    json pts = json::array();
    for (const GemmRow& r : rows) pts.push_back(row_json(r, opts, *pcts));
    doc["points"] = pts;
    json ws = json::array();
    for (const std::string& w : warned) ws.push_back(w);
    doc["warnings"] = ws;
    doc["result"] = interrupted ? "interrupted" : failed ? "fail" : "pass";
    written = write_output_file(opts.json_path, dump_json(doc, 2) + "\n", &json_out);
    if (!written) err << "gexec: --json: " << written.error().message << "\n";
  }
  if (written && !opts.export_times.empty()) {
    written = write_output_file(opts.export_times, times_csv, &out);
    if (!written) err << "gexec: --export-times: " << written.error().message << "\n";
  }
  if (interrupted) {
    err << "gexec: interrupted (Ctrl-C) after " << rows.size() << " of " << points->size()
        << " points; the rows of those are written\n";
    return Exit::interrupted;
  }
  if (failed) return Exit::check_failed;
  return written ? Exit::ok : Exit::runtime;
}

}  // namespace gexec
