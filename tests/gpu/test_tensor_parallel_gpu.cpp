// Tensor parallelism over NCCL (--tp, docs/distributed.md): with one GPU, the sharded graphs run
// through a real one-rank NCCL communicator (every collective an NCCL call, the gathers along a
// later axis through the strided copies), checked against the reference of the unsharded graph;
// the step timed with its compute and communication apart. Two ranks run where two GPUs are.
#include <string>

#include "catch.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/backends/cuda_device.hpp"
#include "gexec/kernels/declared.hpp"
#include "unit/process.hpp"

using namespace gexec;

namespace {

RunOptions cuda_ranks(const std::string& rel, std::vector<int> devices, const std::string& reduce = "all-reduce") {
  RunOptions o;
  o.graph_path = test::source_path(rel);
  o.backend = "cuda";
  o.tp = int(devices.size());
  o.devices = std::move(devices);
  o.tp_reduce = reduce;
  return o;
}

const char* const kGraphs[] = {"graphs/gpt_mlp_block.json", "graphs/llama_mlp_block.json", "graphs/mlp3.json",
                               "graphs/gemm_bias_relu.json", "graphs/batched_matmul.json", "graphs/transposed.json",
                               "graphs/gemm_bias_gelu_bf16.json", "graphs/fp8_mlp3.json", "graphs/fp8_gemm_bias_relu.json"};

}  // namespace

TEST_CASE("gpu tensor parallel: sharded graphs through a one-rank NCCL communicator", "[gpu][tp]") {
  if (!kNcclBuilt) {
    WARN("skipped: gexec was built without NCCL (" << nccl_build_info() << ")");
    return;
  }
  int collectives = 0;
  for (const char* rel : kGraphs)
    for (const char* reduce : {"all-reduce", "reduce-scatter"}) {
      INFO(rel << " " << reduce);
      const RunReport rep = run_graph(cuda_ranks(rel, {0}, reduce));
      INFO((rep.error ? rep.error->message : ""));
      REQUIRE(rep.result == RunReport::Result::pass);
      REQUIRE(rep.tp.has_value());
      CHECK(rep.tp->communicator.find("NCCL") == 0);
      collectives += int(rep.tp->collectives.size());
    }
  CHECK(collectives >= 20);  // every product cut (N = 1 divides all): the NCCL calls ran
}

TEST_CASE("gpu tensor parallel: the sharded step timed, compute and communication apart", "[gpu][tp]") {
  if (!kNcclBuilt) {
    WARN("skipped: gexec was built without NCCL");
    return;
  }
  RunOptions o = cuda_ranks("graphs/gpt_mlp_block.json", {0});
  o.timing.iters = 20;
  o.timing.count_iterations = true;
  const RunReport rep = run_graph(o);
  INFO((rep.error ? rep.error->message : ""));
  REQUIRE(rep.result == RunReport::Result::pass);
  REQUIRE(rep.tp.has_value());
  REQUIRE(rep.tp->timed);
  CHECK(rep.tp->step_us > 0);
  CHECK(rep.tp->compute_us > 0);
  CHECK(rep.tp->communication_us > 0);
  REQUIRE(rep.tp->collectives.size() == 1);
  CHECK(rep.tp->collectives[0].median_us > 0);
  CHECK(rep.tp->overlap >= 0);
  CHECK(rep.tp->overlap <= 1);
}

TEST_CASE("gpu tensor parallel: two ranks on two GPUs", "[gpu][tp][multi-gpu]") {
  if (cuda_device_count() < 2 || !kNcclBuilt) {
    WARN("skipped: " << cuda_device_count() << " CUDA device(s) here; two ranks on NCCL need two");
    return;
  }
  for (const char* rel : kGraphs) {
    INFO(rel);
    const RunReport rep = run_graph(cuda_ranks(rel, {0, 1}));
    INFO((rep.error ? rep.error->message : ""));
    CHECK(rep.result == RunReport::Result::pass);
  }
}
