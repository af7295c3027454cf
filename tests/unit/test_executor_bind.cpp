// Executor::bind: graph inputs and outputs in a caller's buffers instead of the arena, on the CPU
// backend (the CUDA kernels are covered by python/tests/test_gpu.py on the GPU machine).
#if GEXEC_HAVE_CPU

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gexec/backends/cpu_device.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/rng/init.hpp"

using namespace gexec;

namespace {

struct Prepared {
  std::unique_ptr<Device> dev;
  std::unique_ptr<Executor> ex;
};

Prepared prepare(const std::string& file) {
  auto g = load_graph_file(std::string(GEXEC_SOURCE_DIR) + "/graphs/" + file);
  REQUIRE(g.ok());
  Prepared p;
  p.dev = open_cpu_device();
  auto sel = select_kernels(*g, p.dev->caps(), Backend::cpu);
  REQUIRE(sel.ok());
  auto ex = Executor::create(*p.dev, *g, *sel, plan_buffers(*g), 7);
  REQUIRE(ex.ok());
  p.ex = std::move(*ex);
  return p;
}

std::vector<uint8_t> read(const Executor& ex, TensorId t) {
  auto r = ex.read(t);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("cpu: bound buffers are read and written in place of the arena", "[cpu][bind]") {
  Prepared p = prepare("gemm_bias_relu.json");  // A f16, B f16, Bias f32 constant, C f16
  Executor& ex = *p.ex;
  const Graph& g = ex.graph();
  const TensorId a = g.find_tensor("A"), bias = g.find_tensor("Bias"), c = g.find_tensor("C");
  REQUIRE(ex.run_checked().ok());
  const std::vector<uint8_t> in_arena = read(ex, c);

  // The same values in the caller's buffers give the same bytes.
  std::vector<uint8_t> my_a = read(ex, a), my_c(in_arena.size(), 0);
  REQUIRE(ex.why_not_bindable(a).empty());
  REQUIRE(ex.bind(a, my_a.data()).ok());
  REQUIRE(ex.bind(c, my_c.data()).ok());
  CHECK(ex.address(a) == my_a.data());
  REQUIRE(ex.enqueue().ok());
  REQUIRE(ex.device().synchronize().ok());
  CHECK(my_c == in_arena);

  // New values in the bound A are seen by the next run: it reads the caller's memory.
  std::fill(my_a.begin(), my_a.end(), uint8_t(0));  // A = 0: C = relu(Bias) in every row
  REQUIRE(ex.enqueue().ok());
  const std::vector<uint8_t> bias_bytes = read(ex, bias);
  const auto* bias_v = reinterpret_cast<const float*>(bias_bytes.data());
  const auto* c_v = reinterpret_cast<const uint16_t*>(my_c.data());
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 96; ++j)
      REQUIRE(std::fabs(f16_to_float(c_v[i * 96 + j]) - std::max(bias_v[j], 0.0f)) <= 2e-3f);

  // A constant moved to a caller's buffer is read again (the kernel is built again on it).
  std::vector<float> ones(96, 1.0f);
  REQUIRE(ex.bind(bias, ones.data()).ok());
  REQUIRE(ex.enqueue().ok());
  for (int64_t e = 0; e < 64 * 96; ++e) REQUIRE(f16_to_float(c_v[e]) == 1.0f);

  // Back to the arena: its slots kept their values, and the output goes there again.
  REQUIRE(ex.bind(a, nullptr).ok());
  REQUIRE(ex.bind(bias, nullptr).ok());
  REQUIRE(ex.bind(c, nullptr).ok());
  CHECK(ex.address(c) != my_c.data());
  REQUIRE(ex.run_checked().ok());
  CHECK(read(ex, c) == in_arena);
}

TEST_CASE("cpu: only graph inputs and outputs can be bound", "[cpu][bind]") {
  Prepared p = prepare("gemm_f32.json");  // AB = A @ B; C = AB + Res
  Executor& ex = *p.ex;
  const TensorId ab = ex.graph().find_tensor("AB");
  CHECK(ex.why_not_bindable(ab).find("intermediate") != std::string::npos);
  std::vector<float> buf(96 * 64);
  Status s = ex.bind(ab, buf.data());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == Exit::bad_input);
  CHECK(s.error().message.find("AB cannot be bound") != std::string::npos);
  CHECK(ex.address(ab) != buf.data());
  CHECK_FALSE(ex.why_not_bindable(TensorId(1000)).empty());
}

#else

#include "skip.hpp"

GEXEC_SKIPPED_TEST("cpu: Executor::bind on the CPU backend", "[cpu]", GEXEC_NO_CPU_BACKEND)

#endif  // GEXEC_HAVE_CPU
