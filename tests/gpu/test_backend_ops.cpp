// Every CUDA kernel of the table, every case its declaration allows, through the real selector,
// planner and executor on the GPU, against the reference (tests/backend_ops.hpp).
#include <string>

#include "backend_ops.hpp"
#include "catch.hpp"
#include "gexec/backends/cuda_device.hpp"

using namespace gexec;

TEST_CASE("backend ops: every CUDA kernel, every declared case, against the reference", "[gpu][backend-ops]") {
  auto dev = open_cuda_device(0);
  REQUIRE(dev.ok());
  int run = 0, kernels = 0;
  for (const KernelDef& def : kernel_table()) {
    if (def.backend != Backend::cuda) continue;
    ++kernels;
    const auto cases = test::cases_for(def);
    INFO(def.name << ": no case");
    CHECK_FALSE(cases.empty());
    for (const test::OpCase& c : cases) {
      INFO(def.name << ": " << c.what);
      const test::CaseResult r = test::run_case(**dev, c.graph);
      INFO(r.describe());
      CHECK(r.kernel == def.name);
      CHECK(r.pass());
      ++run;
    }
  }
  CHECK(kernels > 0);
  CHECK(run >= 50);
}
