// The selector: declared capabilities and checks decide, and every rejection has a reason.
#include <set>

#include "catch.hpp"
#include "process.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/kernels/table.hpp"

using namespace gexec;
using gexec::test::has;

namespace {

Graph load(const std::string& rel) {
  auto g = load_graph_file(std::string(GEXEC_SOURCE_DIR) + "/" + rel);
  REQUIRE(g.ok());
  return *g;
}

// The selection for the graph at `rel` on a CUDA device of `arch` (as --arch assumes it).
Result<Selection> select_for_arch(const std::string& rel, std::string_view arch) {
  const Graph g = load(rel);
  auto caps = caps_for_arch(arch);
  REQUIRE(caps.ok());
  return select_kernels(g, *caps, Backend::cuda);
}

}  // namespace

TEST_CASE("every kernel in the table has a name, a summary and a unique name", "[select]") {
  std::set<std::string> names;
  for (const KernelDef& k : kernel_table()) {
    CHECK_FALSE(k.name.empty());
    CHECK_FALSE(k.summary.empty());
    CHECK(names.insert(k.name).second);
  }
  CHECK(has(print_kernel_table(), "cublaslt.gemm_bias_act"));
}

TEST_CASE("the example selects the fused cuBLASLt kernel and says how it handles the f32 bias", "[select]") {
  auto sel = select_for_arch("graphs/gemm_bias_relu.json", "sm_90");
  REQUIRE(sel.ok());
  REQUIRE(sel->ops.size() == 1);
  REQUIRE(sel->ops[0].kernel != nullptr);
  CHECK(sel->ops[0].kernel->name == "cublaslt.gemm_bias_act");
  std::string notes;
  for (const auto& n : sel->ops[0].notes) notes += n + "\n";
  CHECK(has(notes, "once"));
}

TEST_CASE("a device below a kernel's compute capability is refused with the reason", "[select]") {
  auto sel = select_for_arch("graphs/gemm_bias_relu.json", "sm_60");
  REQUIRE_FALSE(sel.ok());
  CHECK(has(sel.error().message, "cublaslt.gemm_bias_act: needs sm_"));
  CHECK(has(sel.error().message, "the device is sm_60"));
}

TEST_CASE("--arch accepts sm_XY and refuses anything else", "[select]") {
  CHECK(caps_for_arch("sm_90").ok());
  CHECK(caps_for_arch("sm_90a").ok());
  CHECK(caps_for_arch("sm_100")->cc == 100);
  for (const char* bad : {"", "sm_", "90", "sm_x0", "sm_9", "gfx90a", "sm_90b"}) {
    auto c = caps_for_arch(bad);
    INFO(bad);
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().code == Exit::bad_input);
    CHECK(has(c.error().message, "expected sm_XY"));
  }
}

// Both ran into the FP8 kernel on the H200 and failed there: a residual was dropped (the kernel
// runs with beta 0: wrong results, caught by the check), and a batched product with a shared B
// and per-column scales had no cuBLASLt algorithm (exit 3). Both are refused at selection now.
TEST_CASE("the FP8 kernels refuse a residual and outer-vector scales with a shared batched B, with reasons",
          "[select][f8]") {
  auto res = select_for_arch("tests/data/f8/residual_f32.json", "sm_90");
  REQUIRE_FALSE(res.ok());
  CHECK(has(res.error().message, "a residual is not supported"));
  auto shared = select_for_arch("tests/data/f8/rowwise_shared_b_batched.json", "sm_90");
  REQUIRE_FALSE(shared.ok());
  CHECK(has(shared.error().message, "stride-0 operand"));
}
