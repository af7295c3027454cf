// The tuning cache file (src/tune/tuning_cache.cpp): a round trip, caches from another device or
// version, or unreadable ones, ignored, and saves that merge with what others saved meanwhile.
#include "catch.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gexec/tune/tuning_cache.hpp"

using namespace gexec;

namespace {

DeviceCaps caps(std::string name, std::string cuda = "13.0", std::string lt = "13.0.0") {
  DeviceCaps c;
  c.name = std::move(name);
  c.cuda_runtime = std::move(cuda);
  c.cublaslt = std::move(lt);
  return c;
}

}  // namespace

TEST_CASE("tuning cache: round trip, bound to device and versions", "[tuning]") {
  const std::string path = "gexec_tuning_unit_" + std::to_string(::getpid()) + ".json";
  std::remove(path.c_str());
  const DeviceCaps here = caps("NVIDIA H200");
  CHECK(load_tuning_cache(path, here).entries.empty());  // missing: empty, no error

  TuningCache c = load_tuning_cache(path, here);
  c.entries["m=1 n=2 k=3"] = TuningEntry{3, "algo 21 tile 15 stages 8 splitK 1", 12.5, 8.25};
  c.entries["m=4 n=5 k=6"] = TuningEntry{0, "algo 6 tile 20", 3.0, 3.0};
  REQUIRE(save_tuning_cache(path, c));

  const TuningCache back = load_tuning_cache(path, here);
  REQUIRE(back.entries.size() == 2);
  const TuningEntry& e = back.entries.at("m=1 n=2 k=3");
  CHECK(e.variant == 3);
  CHECK(e.name == "algo 21 tile 15 stages 8 splitK 1");
  CHECK(e.default_us == 12.5);
  CHECK(e.best_us == 8.25);

  CHECK(load_tuning_cache(path, caps("NVIDIA H100")).entries.empty());
  CHECK(load_tuning_cache(path, caps("NVIDIA H200", "12.8")).entries.empty());
  CHECK(load_tuning_cache(path, caps("NVIDIA H200", "13.0", "13.1.0")).entries.empty());

  {
    std::ofstream out(path);
    out << "{ not json";
  }
  CHECK(load_tuning_cache(path, here).entries.empty());
  {
    std::ofstream out(path);
    out << R"({"format": "something else", "entries": {}})";
  }
  CHECK(load_tuning_cache(path, here).entries.empty());
  std::remove(path.c_str());
}

TEST_CASE("tuning cache: a save adds to what another process saved meanwhile", "[tuning]") {
  const std::string path = "gexec_tuning_merge_" + std::to_string(::getpid()) + ".json";
  std::remove(path.c_str());
  const DeviceCaps here = caps("NVIDIA H200");
  // Two processes load the same (empty) cache, tune different kernels and save in turn.
  TuningCache a = load_tuning_cache(path, here), b = load_tuning_cache(path, here);
  a.entries["sig a"] = TuningEntry{1, "algo a", 2.0, 1.0};
  b.entries["sig b"] = TuningEntry{2, "algo b", 4.0, 3.0};
  REQUIRE(save_tuning_cache(path, a));
  REQUIRE(save_tuning_cache(path, b));
  TuningCache both = load_tuning_cache(path, here);
  CHECK(both.entries.size() == 2);
  CHECK(both.entries.count("sig a") == 1);
  CHECK(both.entries.count("sig b") == 1);
  // A cache of another device is replaced, not merged with.
  TuningCache other = load_tuning_cache(path, caps("NVIDIA H100"));
  other.entries["sig c"] = TuningEntry{0, "algo c", 1.0, 1.0};
  REQUIRE(save_tuning_cache(path, other));
  CHECK(load_tuning_cache(path, caps("NVIDIA H100")).entries.size() == 1);

  // Many processes saving at once lose none of their choices.
  std::remove(path.c_str());
  constexpr int kProcs = 4, kEach = 25;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      for (int e = 0; e < kEach; ++e) {
        TuningCache c = load_tuning_cache(path, here);
        c.entries.clear();  // what autotune saves: its new choices only
        c.entries["p" + std::to_string(p) + " e" + std::to_string(e)] = TuningEntry{e, "algo", 1.0, 1.0};
        if (!save_tuning_cache(path, c)) _exit(3);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(load_tuning_cache(path, here).entries.size() == size_t(kProcs * kEach));
  std::remove(path.c_str());
}

TEST_CASE("tuning cache: the mismatch warning names unknown versions as such", "[tuning]") {
  const std::string path = "gexec_tuning_warn_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path);
    out << R"({"format": "gexec.tuning", "device": "NVIDIA H200", "cuda": "", "entries": {}})";
  }
  std::ostringstream log;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  const TuningCache c = load_tuning_cache(path, caps("NVIDIA H200", "", "13.1.0"));
  spdlog::set_default_logger(previous);
  std::remove(path.c_str());
  CHECK(c.entries.empty());
  INFO(log.str());
  CHECK(log.str().find("with CUDA unknown and cuBLASLt unknown, not NVIDIA H200 with CUDA unknown and cuBLASLt 13.1.0") !=
        std::string::npos);
  CHECK(log.str().find("CUDA  and") == std::string::npos);
}
