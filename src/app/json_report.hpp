// --report FILE.json: a run's report as JSON (schema: docs/report-schema.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "gexec/app/run_report.hpp"

namespace gexec {

// The report's format name and version; a change of meaning bumps the version.
inline constexpr const char* kReportFormat = "gexec.report";
inline constexpr int kReportVersion = 3;

// The whole document: the header (format, versions), the result and exit status, and every
// section the run reached. Infinities and NaN are written as null (JSON has neither).
nlohmann::json report_json(const RunReport& r);

// The `check` section alone: how the outputs were checked, and one entry per output (`gexec
// check` writes it too).
nlohmann::json check_json(const CheckSummary& c);

// The run options that both `gexec run`'s report and `gexec gemm`'s JSON carry under "options",
// spelled once: backend, device, pad, verify, the timing's iters, warm-up, duration and CUDA graph
// use, autotune and algo. Each command adds its own.
nlohmann::json common_options_json(const RunOptions& o);

// A number, or null when it is not finite.
nlohmann::json finite_or_null(double v);

// Writes the document, indented, atomically (whole or not at all); path "-" writes it on
// `stdout_stream`. Runtime error when the file cannot be written.
Status write_report(const std::string& path, const nlohmann::json& doc, std::ostream* stdout_stream = nullptr);

}  // namespace gexec
