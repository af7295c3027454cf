// The tuning cache file: the chosen variant per kernel signature, valid for one device name,
// CUDA runtime and cuBLASLt version.
#pragma once

#include <map>
#include <string>

#include "gexec/kernels/device_caps.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct TuningEntry {
  int variant = 0;     // the index among the kernel's variants when it was saved
  std::string name;    // the variant's name (its configuration): what a reload matches
  double default_us = 0, best_us = 0;
};

struct TuningCache {
  std::string device, cuda, cublaslt;
  std::map<std::string, TuningEntry> entries;  // by kernel signature
};

// The cache in `path` when it exists and was made on this device and these versions; empty
// (with a warning saying why) when it is from elsewhere or unreadable; empty when it is missing
// or `path` is empty. An empty cache still names this device and these versions.
TuningCache load_tuning_cache(const std::string& path, const DeviceCaps& caps);
// Adds `cache`'s entries to the file, over those it holds for the same device and versions
// (another process may have saved some since this one loaded it), and replaces it atomically,
// all under a lock (io/locked_update.hpp): processes tuning at once lose none of their choices.
// A file from another device or version, or not a tuning cache, is replaced by `cache` alone.
Status save_tuning_cache(const std::string& path, const TuningCache& cache);

// A file that exists at `path` but is not a gexec tuning cache (another JSON file, a folder, a
// FIFO): refused with bad_input, since the save after tuning would overwrite it. A missing
// file, or an empty path, is fine.
Status check_tuning_cache_file(const std::string& path);

}  // namespace gexec
