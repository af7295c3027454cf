// GPU tests of the transformer blocks as whole graphs: the GPT and LLaMA MLP blocks pass on the
// GPU, with and without autotuning, and say what they fused. The kernels they use (cuBLASLt with a
// residual as C, MUL, SILU, the FUSED_ELEMENTWISE kernel) are cases of the backend-ops harness
// (tests/backend_ops.hpp, run by test_backend_ops.cpp).
#include <string>

#include "catch.hpp"
#include "unit/graph_builder.hpp"
#include "unit/process.hpp"

using namespace gexec;
using test::has;

TEST_CASE("gpu blocks: the block graphs pass, tuned too", "[gpu][blocks]") {
  for (const char* name : {"gpt_mlp_block", "llama_mlp_block"}) {
    const std::string graph = test::source_path(std::string("graphs/") + name + ".json");
    for (const char* extra : {"", " --autotune --iters 3"}) {
      auto r = test::run_gexec("-v run '" + graph + "' --backend cuda" + std::string(extra));
      INFO(name << extra << "\n" << r.output);
      CHECK(r.status == 0);
      CHECK(has(r.output, "result: pass"));
      CHECK(has(r.output, "read as cuBLASLt's C with beta 1"));  // the residual went into the second product
      if (std::string(name) == "llama_mlp_block") CHECK(has(r.output, "cuda.fused_elementwise"));
    }
  }
}
