// --report FILE.json: the pieces of one run's JSON report (schema: docs/report-schema.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gexec/exec/buffer_plan.hpp"
#include "gexec/kernels/device_caps.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/verify/compare.hpp"

namespace gexec {

// The report's format name and version; a change of meaning bumps the version.
inline constexpr const char* kReportFormat = "gexec.report";
inline constexpr int kReportVersion = 2;

// A report with only its header (format, version, gexec's version) and the result unknown.
nlohmann::json report_start();
nlohmann::json report_graph(const Graph& g, const std::string& file, uint64_t seed);
nlohmann::json report_device(const DeviceCaps& caps, Backend backend);
nlohmann::json report_passes(const std::vector<PassRecord>& records);
nlohmann::json report_kernels(const Graph& g, const Selection& s);
nlohmann::json report_buffers(const Graph& g, const BufferPlan& plan);
// One entry per output; infinities and NaN are written as null (JSON has neither).
nlohmann::json report_checks(const Graph& g, const std::vector<OutputCheck>& checks);

// The report's `check` section: how the outputs were checked, and one entry per output.
nlohmann::json report_check_section(const std::string& requested, const std::string& mode, int64_t samples,
                                    double reference_work, double full_check_limit, const std::string& precision);

// A number, or null when it is not finite.
nlohmann::json finite_or_null(double v);

// Writes the document, indented; runtime_error when the file cannot be written.
Status write_report(const std::string& path, const nlohmann::json& doc);

}  // namespace gexec
