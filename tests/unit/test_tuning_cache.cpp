// The tuning cache file (src/tune/tuning_cache.cpp): a round trip, and caches from another
// device or version, or unreadable ones, ignored.
#include "catch.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

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
