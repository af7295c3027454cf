// Text rendering of a run's report: the sections in the order the run fills them.
#include "report.hpp"
#include "tp_report.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "gexec/exec/buffer_plan.hpp"
#include "expect.hpp"
#include "timing_report.hpp"

namespace gexec {
namespace {

void print_graph_line(std::ostream& out, const GraphSummary& g) {
  out << "graph " << g.name << " (" << g.file << (g.source.empty() ? "" : ", " + g.source) << "): " << g.tensors << " tensors, " << g.ops << " ops, seed " << g.seed
      << "\n";
}

void print_passes(std::ostream& out, const RunReport& r) {
  const PassesSummary& p = *r.passes;
  out << "passes:";
  if (p.records.empty()) out << " none";
  for (const PassRecord& rec : p.records) {
    out << " " << rec.name << (rec.changed ? " (changed)" : "");
    spdlog::debug("pass {}: {:.3f} ms{}", rec.name, rec.millis, rec.changed ? ", changed the graph" : "");
  }
  out << "; " << p.ops_before << " ops -> " << p.ops_after << "\n";
  // The passes' explained decisions (fuse_residual's fused, converted or not fused, and why).
  for (const PassRecord& rec : p.records)
    for (const std::string& note : rec.notes) out << "  " << rec.name << ": " << note << "\n";
}

void print_kernels(std::ostream& out, const std::vector<KernelChoice>& kernels) {
  out << "kernels:\n";
  for (const KernelChoice& c : kernels) {
    out << "  " << c.op << " (" << c.type << ")" << (c.hoisted ? " [once]" : "") << " -> "
        << (c.kernel.empty() ? std::string("none") : c.kernel) << "\n";
    for (const std::string& n : c.notes) out << "      note: " << n << "\n";
    for (const KernelChoice::Rejected& x : c.rejected) out << "      rejected " << x.kernel << ": " << x.reason << "\n";
  }
}

// Every product as the `gexec gemm` line that runs it alone, once its candidate is known (or in a dry run).
void print_gemm_commands(std::ostream& out, const RunReport& r) {
  out << "gemm commands (each product alone; gexec gemm --from FILE runs a file of them):\n";
  for (const KernelChoice& c : *r.kernels)
    if (!c.gemm_command.empty()) out << "  " << c.op << ": " << c.gemm_command << "\n";
  if (!r.emitted_gemms.empty()) out << "wrote the gemm commands to " << r.emitted_gemms << "\n";
}

bool has_gemm_commands(const RunReport& r) {
  if (!r.kernels || (!r.executed && r.result != RunReport::Result::dry_run)) return false;
  for (const KernelChoice& c : *r.kernels)
    if (!c.gemm_command.empty()) return true;
  return false;
}

void print_exact(std::ostream& out, const RunReport& r) {
  out << "exact inputs: integers in -" << *r.exact_range << ".." << *r.exact_range
      << ", every product, sum and result exact\n";
}

void print_loaded(std::ostream& out, const RunReport& r) {
  const std::vector<std::string>& names = *r.loaded_inputs;
  out << "loaded " << names.size() << " input" << (names.size() == 1 ? "" : "s") << " from " << r.load_inputs_dir
      << (names.empty() ? "" : ":");
  for (const std::string& name : names) out << " " << name;
  out << "\n";
}

void print_dump(std::ostream& out, const DumpSummary& d) {
  out << "dumped " << d.tensors << " tensors to " << d.dir;
  for (const std::string& w : d.widened_to_f32)
    out << (w == d.widened_to_f32.front() ? "; written as f32 (NumPy has no bf16 or f8 dtype): " : ", ") << w;
  out << "\n";
}

}  // namespace

// How the outputs are checked: printed before the reference runs, since it can take a while.
void print_check_mode(std::ostream& out, const CheckSummary& c) {
  if (c.mode == VerifyMode::none) out << "check: skipped (--verify none)\n";
  if (c.mode == VerifyMode::sample)
    out << "check: sampled by strata, one element in every " << c.tile << "x" << c.tile << " tile of each output and "
        << "at least " << c.samples << " per output (--verify " << verify_mode_name(c.requested) << (c.why.empty() ? "" : ": " + c.why)
        << ")\n";
  if (c.mode != VerifyMode::none && c.reference == ReferenceSite::device)
    out << "check: the reference's products summed in float64 on " << c.device
        << ", each cross-checked against the CPU\n";
}

namespace {

void print_times(std::ostream& out, const RunReport& r) {
  const PhaseTimes& t = *r.times_ms;
  char times[256];
  std::snprintf(times, sizeof times,
                "time: load %.1f ms, passes %.1f ms, device %.1f ms, set-up %.1f ms, first run %.2f ms, check %.1f ms; "
                "total %.1f ms\n",
                t.load, t.passes, t.device, t.setup, t.first_run, t.check, t.total);
  out << times << "result: " << (r.result == RunReport::Result::pass ? "pass" : "FAIL") << "\n";
}

// One section of the text: whether the run has filled it, and how it prints.
struct Section {
  bool (*present)(const RunReport&);
  void (*print)(std::ostream&, const RunReport&);
};

const Section kSections[] = {
    {[](const RunReport& r) { return r.graph.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_graph_line(o, *r.graph); }},
    {[](const RunReport& r) { return !r.printed_before.empty(); },
     [](std::ostream& o, const RunReport& r) { o << "\n// before the passes\n" << r.printed_before; }},
    {[](const RunReport& r) { return !r.pass_prints.empty(); },
     [](std::ostream& o, const RunReport& r) { o << r.pass_prints; }},
    {[](const RunReport& r) { return r.passes.has_value(); }, print_passes},
    {[](const RunReport& r) { return !r.printed_after.empty(); },
     [](std::ostream& o, const RunReport& r) { o << "\n// after the passes\n" << r.printed_after << "\n"; }},
    {[](const RunReport& r) { return !r.emitted_graph.empty(); },
     [](std::ostream& o, const RunReport& r) { o << "wrote the graph after the passes to " << r.emitted_graph << "\n"; }},
    {[](const RunReport& r) { return r.device.has_value(); },
     [](std::ostream& o, const RunReport& r) {
       o << "device: " << describe(r.device->caps) << " [" << backend_name(r.device->backend) << "]\n";
     }},
    {[](const RunReport& r) { return r.kernels.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_kernels(o, *r.kernels); }},
    {[](const RunReport& r) { return r.buffers.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_plan(o, *r.buffers); }},
    {[](const RunReport& r) { return r.tp.has_value() && !r.tp->arena_bytes.empty(); },
     [](std::ostream& o, const RunReport& r) { print_tp_plan(o, *r.tp); }},
    {[](const RunReport& r) { return r.result == RunReport::Result::dry_run; },
     [](std::ostream& o, const RunReport& r) {
       o << "options: --pad " << pad_policy_name(r.kernel_options.pad)
         << " --precision " << (r.kernel_options.tf32 ? "tf32" : "f32") << "\n";
       o << "dry run: nothing executed\n";
     }},
    {[](const RunReport& r) { return r.loaded_inputs.has_value() && !r.load_inputs_dir.empty(); }, print_loaded},
    {[](const RunReport& r) { return r.loaded_inputs.has_value() && r.exact_range.has_value(); }, print_exact},
    {[](const RunReport& r) { return !r.tuning_log.empty(); },
     [](std::ostream& o, const RunReport& r) { o << r.tuning_log; }},
    {[](const RunReport& r) { return r.executed; },
     [](std::ostream& o, const RunReport& r) {
       for (const std::string& note : r.notes) o << "note: " << note << "\n";
     }},
    {has_gemm_commands, print_gemm_commands},
    {[](const RunReport& r) { return r.dump.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_dump(o, *r.dump); }},
    {[](const RunReport& r) { return r.check.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_check_mode(o, *r.check); }},
    {[](const RunReport& r) { return r.check && r.check->compared && r.check->mode != VerifyMode::none; },
     [](std::ostream& o, const RunReport& r) { print_checks(o, r.check->outputs); }},
    {[](const RunReport& r) { return r.expect.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_expect(o, *r.expect); }},
    {[](const RunReport& r) { return r.tp.has_value() && r.tp->ranks_compared && r.check.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_tp_ranks(o, *r.tp); }},
    {[](const RunReport& r) { return r.timing.has_value(); },
     [](std::ostream& o, const RunReport& r) { print_timing(o, *r.timing); }},
    {[](const RunReport& r) { return r.tp.has_value() && r.tp->timed; },
     [](std::ostream& o, const RunReport& r) { print_tp_timing(o, *r.tp); }},
    {[](const RunReport& r) { return r.times_ms.has_value(); }, print_times},
};
constexpr size_t kSectionCount = sizeof kSections / sizeof kSections[0];

}  // namespace

std::string human_bytes(int64_t bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
  return buf;
}

void print_plan(std::ostream& out, const BufferSummary& plan) {
  if (!plan.fits) {
    out << "buffers: the arena would exceed " << plan.arena_bytes << " bytes (2^63 - 1, the largest size) for "
        << plan.tensors.size() << " tensors; no device can hold it\n";
  } else {
    out << "buffers: one arena of " << human_bytes(plan.arena_bytes) << " for " << plan.tensors.size()
        << " tensors (" << human_bytes(plan.total_bytes) << " without reuse), " << plan.alignment
        << "-byte aligned\n";
  }
  // Offsets past 2^63 - 1 are clamped there (BufferPlan::fits): shown as such, not as a shared offset.
  const int64_t beyond = std::numeric_limits<int64_t>::max();
  for (const PlacedBuffer& b : plan.tensors) {
    out << "  " << b.tensor;
    if (b.offset == beyond) out << " @beyond 2^63";
    else out << " @" << b.offset;
    out << " (" << human_bytes(b.bytes) << ")\n";
  }
}

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN (non-finite)";
  if (std::isinf(v)) return v > 0 ? "inf (non-finite)" : "-inf (non-finite)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8g", v);
  return buf;
}

void print_checks(std::ostream& out, const std::vector<CheckedOutput>& checks) {
  char line[512];
  const bool exact = !checks.empty() && checks.front().check.tol.exact;
  if (exact)
    out << "check: exact, every element bit for bit equal to the reference\n";
  else
    out << "check: pass when every |got - ref| <= its bound (output rounding, intermediate roundings, accumulation,"
           " atol) and ||got - ref|| <= the normwise bound; ratios are error / bound\n";
  std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10s %10s %10s %10s %9s %9s %12s  %s\n", "output", "dtype",
                "shape", "max_abs", "max_rel", "rel_fro", "fro_bound", "elem_rat", "norm_rat", "beyond", "result");
  out << line;
  for (const CheckedOutput& o : checks) {
    const OutputCheck& c = o.check;
    std::string beyond = std::to_string(c.beyond) + "/" + std::to_string(c.checked);
    std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10.3e %10.3e %10.3e %10.3e %9.3f %9.3f %12s  %s\n",
                  c.name.c_str(), std::string(dtype_name(c.dtype)).c_str(), shape_str(o.shape).c_str(), c.max_abs,
                  c.max_rel, c.rel_fro, c.rel_fro_bound, c.max_ratio, c.norm_ratio, beyond.c_str(),
                  c.pass ? "pass" : "FAIL");
    out << line;
    if (c.worst >= 0) {
      // A bound of a non-finite reference is said to be one, not printed as -nan.
      char bound[48];
      if (std::isfinite(c.worst_bound)) std::snprintf(bound, sizeof bound, "%.3g", c.worst_bound);
      else std::snprintf(bound, sizeof bound, "%s", value_text(c.worst_bound).c_str());
      std::snprintf(line, sizeof line, "      worst element %lld: got %s, expected %s, bound %s\n", (long long)c.worst,
                    value_text(c.worst_got).c_str(), value_text(c.worst_ref).c_str(), bound);
      out << line;
    }
    if (c.unbounded > 0)
      out << "      " << c.unbounded << " element" << (c.unbounded == 1 ? " has" : "s have")
          << " no finite bound (the error of a divisor or a POW base reaches 0 there, a block scale's"
             " block may be all zeros, or an operand is an infinity): not compared\n";
    // Non-finite values that are not the reference's own are failures: said so rather than left to puzzle over.
    if (c.got_nonfinite > 0 || c.ref_nonfinite > 0)
      out << "      the output holds " << c.got_nonfinite << " non-finite value" << (c.got_nonfinite == 1 ? "" : "s")
          << " (inf or NaN) and the reference " << c.ref_nonfinite << " that the other does not, of " << c.checked
          << " checked; a non-finite element passes only where the reference holds the same (NaN, or that infinity)\n";
    out << "      checked " << (c.checked < c.count ? std::to_string(c.checked) + " of the " : std::string("all "))
        << c.count << " elements against "
        << (c.checked_by.empty() ? std::string(c.mode == CompareMode::sample ? "the sampled reference" : "the full reference")
                                 : c.checked_by)
        << (c.mode == CompareMode::exact ? ", bit for bit" : "") << "\n";
  }
}

void TextReport::update(const RunReport& r) {
  // Warnings first: each was raised while the section it belongs to was being filled.
  for (; warnings_logged_ < r.warnings.size(); ++warnings_logged_) {
    const RunWarning& w = r.warnings[warnings_logged_];
    if (w.kind == RunWarning::Kind::peak_unknown) spdlog::info("peak unknown: {}", w.message);
    else spdlog::warn("{}", w.message);
  }
  // Sections fill in order, so one that is still empty before a filled one was skipped.
  size_t last = next_section_;
  for (size_t s = next_section_; s < kSectionCount; ++s)
    if (kSections[s].present(r)) last = s + 1;
  for (size_t s = next_section_; s < last; ++s)
    if (kSections[s].present(r)) kSections[s].print(out_, r);
  // As the run goes, also into a file or a pipe (a long timing, then Ctrl-C: what was printed is there).
  if (last > next_section_) out_.flush();
  next_section_ = last;
}

void print_report(std::ostream& out, const RunReport& r) {
  TextReport text(out);
  text.update(r);
}

}  // namespace gexec
