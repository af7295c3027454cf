// The tuning cache as JSON: {"format": "gexec.tuning", "device", "cuda", "cublaslt", "entries"}.
#include "gexec/tune/tuning_cache.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace gexec {

TuningCache load_tuning_cache(const std::string& path, const DeviceCaps& caps) {
  TuningCache c;
  c.device = caps.name;
  c.cuda = caps.cuda_runtime;
  c.cublaslt = caps.cublaslt;
  if (path.empty()) return c;  // no cache file asked for
  std::ifstream in(path);
  if (!in) return c;  // no cache yet: it is written after tuning
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("format", "") != "gexec.tuning") {
      spdlog::warn("tuning cache {} is not a gexec.tuning file; ignored", path);
      return c;
    }
    const std::string dev = j.value("device", ""), cuda = j.value("cuda", ""), lt = j.value("cublaslt", "");
    // Algorithms and their speeds belong to one device and one library build.
    if (dev != c.device || cuda != c.cuda || lt != c.cublaslt) {
      spdlog::warn("tuning cache {} was made on {} with CUDA {} and cuBLASLt {}, not {} with CUDA {} and cuBLASLt "
                   "{}; ignored",
                   path, dev, cuda, lt, c.device, c.cuda, c.cublaslt);
      return c;
    }
    for (const auto& [sig, e] : j.at("entries").items()) {
      TuningEntry t;
      t.variant = e.at("variant").get<int>();
      t.name = e.at("config").get<std::string>();
      t.default_us = e.value("default_us", 0.0);
      t.best_us = e.value("best_us", 0.0);
      c.entries[sig] = t;
    }
  } catch (const std::exception& ex) {
    spdlog::warn("tuning cache {} cannot be read ({}); ignored", path, ex.what());
    c.entries.clear();
  }
  return c;
}

Status save_tuning_cache(const std::string& path, const TuningCache& cache) {
  nlohmann::json j;
  j["format"] = "gexec.tuning";
  j["device"] = cache.device;
  j["cuda"] = cache.cuda;
  j["cublaslt"] = cache.cublaslt;
  j["entries"] = nlohmann::json::object();
  for (const auto& [sig, e] : cache.entries)
    j["entries"][sig] = {{"variant", e.variant}, {"config", e.name}, {"default_us", e.default_us},
                         {"best_us", e.best_us}};
  std::ofstream out(path);
  if (!out) return runtime_error("cannot write the tuning cache " + path);
  out << j.dump(2) << "\n";
  if (!out) return runtime_error("writing the tuning cache " + path + " failed");
  return {};
}

}  // namespace gexec
