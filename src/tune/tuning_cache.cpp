// The tuning cache as JSON: {"format": "gexec.tuning", "device", "cuda", "cublaslt", "entries"}.
#include "gexec/tune/tuning_cache.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "gexec/io/file.hpp"
#include "gexec/io/locked_update.hpp"
#include "gexec/io/text.hpp"

namespace gexec {
namespace {

// A version or device name in a message: "unknown" where the file or the device gave none.
std::string known(const std::string& s) { return s.empty() ? "unknown" : printable(s); }

nlohmann::json entry_json(const TuningEntry& e) {
  return {{"variant", e.variant}, {"config", e.name}, {"default_us", e.default_us}, {"best_us", e.best_us}};
}

// The entries of `text` when it is a gexec tuning cache of `cache`'s device and versions (the
// ones another process saved since this one loaded); none otherwise.
nlohmann::json same_device_entries(const std::string& text, const TuningCache& cache) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", nlohmann::json()) != "gexec.tuning") return {};
  if (j.value("device", nlohmann::json()) != cache.device || j.value("cuda", nlohmann::json()) != cache.cuda ||
      j.value("cublaslt", nlohmann::json()) != cache.cublaslt)
    return {};
  const auto it = j.find("entries");
  return it != j.end() && it->is_object() ? *it : nlohmann::json();
}

}  // namespace

TuningCache load_tuning_cache(const std::string& path, const DeviceCaps& caps) {
  TuningCache c;
  c.device = caps.name;
  c.cuda = caps.cuda_runtime;
  c.cublaslt = caps.cublaslt;
  if (path.empty()) return c;  // no cache file asked for
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return c;  // written after tuning
  auto f = InputFile::open(path);  // never waits on a FIFO
  if (!f) {
    spdlog::warn("{}; ignored", printable(f.error().message));
    return c;
  }
  auto text = f->read_all();
  if (!text) {
    spdlog::warn("{}; ignored", printable(text.error().message));
    return c;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(*text);
    if (j.value("format", "") != "gexec.tuning") {
      spdlog::warn("tuning cache {} is not a gexec.tuning file; ignored", path);
      return c;
    }
    const std::string dev = j.value("device", ""), cuda = j.value("cuda", ""), lt = j.value("cublaslt", "");
    // Algorithms and their speeds belong to one device and one library build.
    if (dev != c.device || cuda != c.cuda || lt != c.cublaslt) {
      spdlog::warn("tuning cache {} was made on {} with CUDA {} and cuBLASLt {}, not {} with CUDA {} and cuBLASLt "
                   "{}; ignored",
                   path, known(dev), known(cuda), known(lt), known(c.device), known(c.cuda), known(c.cublaslt));
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
  Status s = update_file_locked(path, [&](const std::optional<std::string>& current) -> Result<std::string> {
    nlohmann::json j;
    j["format"] = "gexec.tuning";
    j["device"] = cache.device;
    j["cuda"] = cache.cuda;
    j["cublaslt"] = cache.cublaslt;
    j["entries"] = nlohmann::json::object();
    // What the file holds now for this device, then this process's choices over it.
    if (current) {
      const nlohmann::json kept = same_device_entries(*current, cache);
      for (const auto& [sig, e] : kept.items()) j["entries"][sig] = e;
    }
    for (const auto& [sig, e] : cache.entries) j["entries"][sig] = entry_json(e);
    return dump_json(j, 2) + "\n";
  });
  if (!s) return s.error().with("writing the tuning cache");
  return {};
}

Status check_tuning_cache_file(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return {};
  auto f = InputFile::open(path);
  if (!f) return f.error().with("--tuning-cache");
  auto text = f->read_all();
  if (!text) return text.error().with("--tuning-cache");
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", nlohmann::json()) != "gexec.tuning")
    return bad_input("--tuning-cache: " + path_text(path) +
                     " exists and is not a gexec tuning cache (no \"format\": \"gexec.tuning\"); it would be "
                     "overwritten after tuning: name another file, or pass --force");
  return {};
}

}  // namespace gexec
