// A run's timing as JSON: the statistics of `gexec run`'s "timing-json" line, the report's
// "timing" section and the dict the Python module's Executor.time() returns.
#pragma once

#include <nlohmann/json.hpp>

#include "gexec/app/run_report.hpp"

namespace gexec {

nlohmann::json timing_json(const RunTiming& t);

}  // namespace gexec
