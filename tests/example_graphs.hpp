// The example graphs of graphs/ for tests that run each of them many times with the full check.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "unit/process.hpp"

namespace gexec::test {

// The bytes a graph file's tensors take, from their shapes and dtypes (0 where unreadable).
inline double graph_bytes(const std::string& path) {
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.contains("tensors")) return 0;
  double bytes = 0;
  for (const auto& t : j["tensors"]) {
    double n = 1;
    for (const auto& d : t.value("shape", nlohmann::json::array())) n *= d.get<double>();
    const std::string dt = t.value("dtype", "f32");
    bytes += n * (dt == "f32" || dt == "i32" ? 4 : dt.rfind("f8", 0) == 0 ? 1 : 2);
  }
  return bytes;
}

// Every graphs/*.json under 1 GiB of tensors; the larger ones (the MoE layer, 3 GB of experts,
// the d 8192 MLP block, whose references take minutes to hours on a CPU) are left out with a line
// saying so: smoke.sh, the GPU tests and the benchmarks run them where there is a GPU.
inline std::vector<std::string> example_graphs() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source_path("graphs"))) {
    if (e.path().extension() != ".json") continue;
    if (graph_bytes(e.path().string()) > double(int64_t(1) << 30))
      WARN("skipped " << e.path().string() << ": over 1 GiB of tensors, run where there is a GPU");
    else
      files.push_back(e.path().string());
  }
  REQUIRE(!files.empty());
  return files;
}

}  // namespace gexec::test
