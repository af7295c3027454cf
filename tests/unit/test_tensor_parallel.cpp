// Tensor parallelism (--tp, docs/distributed.md): the sharding's plan, the host communicator, and
// sharded graphs run as N CPU ranks in one process against the reference of the unsharded graph;
// then broken collectives, which the check must catch.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "catch.hpp"
#include "gexec/app/commands.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/exec/communicator.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/declared.hpp"
#include "gexec/passes/tensor_parallel.hpp"
#include "graph_builder.hpp"
#include "process.hpp"

using namespace gexec;

namespace {

Graph load(const std::string& rel) {
  auto g = load_graph_file(test::source_path(rel));
  INFO(rel << ": " << (g.ok() ? "" : g.error().message));
  REQUIRE(g.ok());
  return std::move(*g);
}

int count_ops(const Graph& g, OpType t) {
  return int(std::count_if(g.ops.begin(), g.ops.end(), [t](const Op& op) { return op.type == t; }));
}

const ShardedInput* input_named(const ShardPlan& p, const std::string& name) {
  for (const ShardedInput& s : p.inputs)
    if (s.name == name) return &s;
  return nullptr;
}

RunOptions cpu_ranks(const std::string& rel, int n, const std::string& reduce = "all-reduce") {
  RunOptions o;
  o.graph_path = test::source_path(rel);
  o.backend = "cpu";
  o.tp = n;
  o.tp_reduce = reduce;
  return o;
}

// A product pair with everything a row-parallel epilogue carries: bias, a residual times beta, GELU.
Graph residual_pair() {
  test::Builder b;
  const TensorId x = b.tensor("x", {32, 64}, DType::f16), w1 = b.tensor("w1", {64, 96}, DType::f16);
  const TensorId b1 = b.tensor("b1", {96}, DType::f16), h = b.tensor("h", {32, 96}, DType::f16);
  const TensorId w2 = b.tensor("w2", {96, 64}, DType::f16), b2 = b.tensor("b2", {64}, DType::f32);
  const TensorId y = b.tensor("y", {32, 64}, DType::bf16);
  Op& up = b.op(OpType::GEMM_BIAS_ACT, {x, w1, b1}, h);
  up.attrs.act = Act::relu;
  up.attrs.mnk = std::array<int64_t, 3>{32, 96, 64};
  Op& down = b.op(OpType::GEMM_BIAS_ACT, {h, w2, b2, x}, y);
  down.attrs.act = Act::gelu;
  down.attrs.residual = true;
  down.attrs.beta = 0.5;
  down.attrs.alpha = 0.75;
  b.g.outputs = {y};
  b.g.name = "residual_pair";
  return b.g;
}

}  // namespace

TEST_CASE("tensor parallel: an MLP pair becomes column- then row-parallel with one ALL_REDUCE", "[tp]") {
  const Graph g = load("graphs/gpt_mlp_block.json");
  for (int n : {1, 2, 4}) {
    INFO("ranks " << n);
    auto p = shard_graph(g, {n, false});
    REQUIRE(p.ok());
    CHECK(verify(p->rank).empty());
    CHECK(count_ops(p->rank, OpType::ALL_REDUCE) == 1);
    CHECK(count_ops(p->rank, OpType::ALL_GATHER) == 0);  // the intermediate never leaves its rank
    const ShardedInput* w1 = input_named(*p, "W1.shard");
    const ShardedInput* w2 = input_named(*p, "W2.shard");
    const ShardedInput* b1 = input_named(*p, "b1.shard");
    REQUIRE(w1);
    REQUIRE(w2);
    REQUIRE(b1);
    CHECK((w1->of == "W1" && w1->axis == 1));  // along N
    CHECK((w2->of == "W2" && w2->axis == 0));  // along K
    CHECK(b1->axis == 0);
    CHECK_FALSE(input_named(*p, "b2.shard"));  // the row-parallel bias is added once, whole
    CHECK(p->rank.tensor(p->rank.find_tensor("W1.shard")).shape == std::vector<int64_t>{128, 512 / n});
    // The outputs keep their names and shapes.
    REQUIRE(p->rank.outputs.size() == 1);
    CHECK(p->rank.tensor(p->rank.outputs[0]).name == "y");
    CHECK(p->rank.tensor(p->rank.outputs[0]).shape == std::vector<int64_t>{64, 128});
  }
}

TEST_CASE("tensor parallel: reduce-scatter keeps each rank's rows and gathers them at the output", "[tp]") {
  auto p = shard_graph(load("graphs/gpt_mlp_block.json"), {2, true});
  REQUIRE(p.ok());
  CHECK(verify(p->rank).empty());
  CHECK(count_ops(p->rank, OpType::REDUCE_SCATTER) == 1);
  CHECK(count_ops(p->rank, OpType::ALL_REDUCE) == 0);
  REQUIRE(count_ops(p->rank, OpType::ALL_GATHER) == 1);
  for (const Op& op : p->rank.ops)
    if (op.type == OpType::ALL_GATHER) CHECK(op.attrs.axis == 0);
  // The residual x is added to each rank's rows: cut along the rows.
  const ShardedInput* x = input_named(*p, "x.shard");
  REQUIRE(x);
  CHECK(x->axis == 0);
}

TEST_CASE("tensor parallel: what cannot be cut runs whole, and the notes say why", "[tp]") {
  // 512 and 128 are not divisible by 3: nothing is cut, nothing is communicated.
  auto p = shard_graph(load("graphs/gpt_mlp_block.json"), {3, false});
  REQUIRE(p.ok());
  CHECK(verify(p->rank).empty());
  CHECK(count_ops(p->rank, OpType::ALL_REDUCE) + count_ops(p->rank, OpType::ALL_GATHER) == 0);
  CHECK(std::any_of(p->notes.begin(), p->notes.end(),
                    [](const std::string& s) { return s.find("not divisible by 3") != std::string::npos; }));
  // A graph that already holds collectives is a rank's program, not a graph to cut.
  CHECK(shard_graph(p->rank, {2, false}).ok());  // (none here)
  auto twice = shard_graph(shard_graph(load("graphs/gpt_mlp_block.json"), {2, false})->rank, {2, false});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().code == Exit::bad_input);
  CHECK_FALSE(shard_graph(load("graphs/gpt_mlp_block.json"), {0, false}).ok());
}

TEST_CASE("tensor parallel: slice_bytes cuts rowmajor and colmajor tensors along either axis", "[tp]") {
  Tensor t;
  t.shape = {4, 6};
  t.dtype = DType::f32;
  std::vector<uint8_t> bytes(24 * 4);
  for (Layout layout : {Layout::rowmajor, Layout::colmajor}) {
    t.layout = layout;
    for (int64_t l = 0; l < 24; ++l) {  // logical element l holds the value l
      const float v = float(l);
      std::memcpy(bytes.data() + 4 * storage_index(t, l), &v, 4);
    }
    for (int axis : {0, 1}) {
      const int ranks = 2;
      for (int r = 0; r < ranks; ++r) {
        INFO("layout " << int(layout) << ", axis " << axis << ", rank " << r);
        const std::vector<uint8_t> s = slice_bytes(t, bytes, axis, ranks, r);
        Tensor part = t;
        part.shape[size_t(axis)] /= ranks;
        REQUIRE(s.size() == size_t(part.numel() * 4));
        for (int64_t l = 0; l < part.numel(); ++l) {
          const int64_t row = l / part.shape[1], col = l % part.shape[1];
          const int64_t whole_row = axis == 0 ? row + r * part.shape[0] : row;
          const int64_t whole_col = axis == 1 ? col + r * part.shape[1] : col;
          float got = 0;
          std::memcpy(&got, s.data() + 4 * storage_index(part, l), 4);
          CHECK(got == float(whole_row * 6 + whole_col));
        }
      }
    }
  }
}

TEST_CASE("tensor parallel: the host communicator's collectives, and ranks out of step", "[tp]") {
  HostCommunicator comm(2);
  // Rank r holds [[r*10 + 0, 1, 2], [r*10 + 3, 4, 5]].
  float in[2][6], gathered[2][12], scattered[2][6], reduced[2][6];
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 6; ++i) in[r][i] = float(r * 10 + i);
  for (int r = 0; r < 2; ++r) REQUIRE(comm.contribute(r, {OpType::ALL_GATHER, DType::f32, {2, 3}, 1, in[r], gathered[r]}).ok());
  const float want_gather[12] = {0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15};
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 12; ++i) CHECK(gathered[r][i] == want_gather[i]);
  // REDUCE_SCATTER along axis 1 of [2, 6]: rank r keeps [2, 3].
  float rs_in[2][12];
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 12; ++i) rs_in[r][i] = float(r + 1) * float(i);
  for (int r = 0; r < 2; ++r)
    REQUIRE(comm.contribute(r, {OpType::REDUCE_SCATTER, DType::f32, {2, 6}, 1, rs_in[r], scattered[r]}).ok());
  // The sum is 3 i; rank r keeps columns 3r .. 3r + 2 of each row.
  for (int r = 0; r < 2; ++r)
    for (int row = 0; row < 2; ++row)
      for (int c = 0; c < 3; ++c) CHECK(scattered[r][row * 3 + c] == 3.0f * float(row * 6 + 3 * r + c));
  for (int r = 0; r < 2; ++r) REQUIRE(comm.contribute(r, {OpType::ALL_REDUCE, DType::f32, {6}, 0, in[r], reduced[r]}).ok());
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 6; ++i) CHECK(reduced[r][i] == float(10 + 2 * i));
  // Rank 0 twice before rank 1: not stepped together.
  REQUIRE(comm.contribute(0, {OpType::ALL_REDUCE, DType::f32, {6}, 0, in[0], reduced[0]}).ok());
  const Status twice = comm.contribute(0, {OpType::ALL_REDUCE, DType::f32, {6}, 0, in[0], reduced[0]});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().message.find("called twice") != std::string::npos);
  // A rank whose call disagrees (another shape).
  const Status other = comm.contribute(1, {OpType::ALL_REDUCE, DType::f32, {5}, 0, in[1], reduced[1]});
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message.find("disagrees") != std::string::npos);
}

#if GEXEC_HAVE_CPU
TEST_CASE("tensor parallel: sharded graphs pass the check as N CPU ranks, N = 2, 3, 4", "[tp][cpu]") {
  const char* graphs[] = {"graphs/gpt_mlp_block.json",  "graphs/llama_mlp_block.json", "graphs/mlp3.json",
                          "graphs/gemm_bias_relu.json", "graphs/gemm_bias_relu_primitives.json",
                          "graphs/batched_matmul.json", "graphs/batched_shared_b.json", "graphs/transposed.json",
                          "graphs/gemm_f32.json",       "graphs/gemm_bias_gelu_bf16.json", "graphs/fp8_mlp3.json",
                          "graphs/fp8_gemm_bias_relu.json", "graphs/fp8_rowwise.json"};
  int with_collectives = 0;
  for (const char* rel : graphs)
    for (int n : {2, 3, 4})
      for (const char* reduce : {"all-reduce", "reduce-scatter"}) {
        INFO(rel << " --tp " << n << " --tp-reduce " << reduce);
        const RunReport rep = run_graph(cpu_ranks(rel, n, reduce));
        INFO((rep.error ? rep.error->message : ""));
        REQUIRE(rep.result == RunReport::Result::pass);
        REQUIRE(rep.tp.has_value());
        CHECK(rep.tp->ranks_compared);
        CHECK(rep.tp->ranks_disagree.empty());
        CHECK(int(rep.tp->arena_bytes.size()) == n);
        with_collectives += !rep.tp->collectives.empty();
      }
  CHECK(with_collectives >= 40);  // most of them are cut and communicate
}

TEST_CASE("tensor parallel: a row-parallel epilogue with bias, residual, beta, alpha and GELU", "[tp][cpu]") {
  RunOptions o;
  o.graph = std::make_shared<const Graph>(residual_pair());
  o.graph_path = "residual_pair";
  o.backend = "cpu";
  for (int n : {2, 4})
    for (const char* reduce : {"all-reduce", "reduce-scatter"}) {
      INFO("--tp " << n << " " << reduce);
      o.tp = n;
      o.tp_reduce = reduce;
      const RunReport rep = run_graph(o);
      INFO((rep.error ? rep.error->message : ""));
      REQUIRE(rep.result == RunReport::Result::pass);
      REQUIRE(rep.tp.has_value());
      REQUIRE(rep.tp->collectives.size() >= 1);
      CHECK(rep.tp->collectives[0].type == (std::string(reduce) == "all-reduce" ? "ALL_REDUCE" : "REDUCE_SCATTER"));
    }
}

namespace {

// Sums every rank but the last: a collective that loses a rank's partial product.
class DropsLastRank final : public HostCommunicator {
 public:
  using HostCommunicator::HostCommunicator;
  void complete(const std::vector<CollectiveCall>& calls) override {
    std::vector<CollectiveCall> fewer = calls;
    if (calls[0].type == OpType::ALL_REDUCE) {
      // The last rank's part replaced by the first's: the sum counts one partial twice, one never.
      fewer.back().in = calls[0].in;
    }
    HostCommunicator::complete(fewer);
  }
};

// Correct, except that rank 1's result is never written: a collective that does not reach a rank.
class MissesRankOne final : public HostCommunicator {
 public:
  using HostCommunicator::HostCommunicator;
  void complete(const std::vector<CollectiveCall>& calls) override {
    std::vector<CollectiveCall> c = calls;
    std::vector<uint8_t> scratch(1 << 20);
    c[1].out = scratch.data();
    HostCommunicator::complete(c);
  }
};

// Gathers the ranks' slices in reverse order.
class GathersReversed final : public HostCommunicator {
 public:
  using HostCommunicator::HostCommunicator;
  void complete(const std::vector<CollectiveCall>& calls) override {
    std::vector<CollectiveCall> c = calls;
    if (calls[0].type == OpType::ALL_GATHER)
      for (size_t r = 0; r < c.size(); ++r) c[r].in = calls[c.size() - 1 - r].in;
    HostCommunicator::complete(c);
  }
};

}  // namespace

TEST_CASE("tensor parallel: broken collectives fail the check (sharpness)", "[tp][cpu]") {
  SECTION("a partial product summed twice, another lost") {
    RunOptions o = cpu_ranks("graphs/gpt_mlp_block.json", 2);
    o.communicator = std::make_shared<DropsLastRank>(2);
    const RunReport rep = run_graph(o);
    CHECK(rep.result == RunReport::Result::fail);
    CHECK(rep.exit_code() == Exit::check_failed);
    REQUIRE(rep.check.has_value());
    CHECK_FALSE(rep.check->pass());
  }
  SECTION("a rank whose result is never written") {
    RunOptions o = cpu_ranks("graphs/gpt_mlp_block.json", 2);
    o.communicator = std::make_shared<MissesRankOne>(2);
    const RunReport rep = run_graph(o);
    CHECK(rep.result == RunReport::Result::fail);
    REQUIRE(rep.tp.has_value());
    CHECK(rep.tp->ranks_disagree.find("rank 1") != std::string::npos);
    CHECK(rep.check->pass());  // rank 0 alone is right: only the comparison of the ranks catches it
  }
  SECTION("slices gathered in the wrong order") {
    RunOptions o = cpu_ranks("graphs/gemm_bias_relu.json", 2);
    o.communicator = std::make_shared<GathersReversed>(2);
    const RunReport rep = run_graph(o);
    CHECK(rep.result == RunReport::Result::fail);
    CHECK_FALSE(rep.check->pass());
  }
  SECTION("a communicator of the wrong size is refused") {
    RunOptions o = cpu_ranks("graphs/gemm_bias_relu.json", 2);
    o.communicator = std::make_shared<HostCommunicator>(3);
    const RunReport rep = run_graph(o);
    CHECK(rep.exit_code() == Exit::bad_input);
  }
}
#else
TEST_CASE("tensor parallel: sharded graphs as CPU ranks", "[tp][cpu]") { WARN("skipped: this build has no CPU backend"); }
#endif

TEST_CASE("tensor parallel: a dry run plans every rank, its memory and its collectives, on any machine", "[tp]") {
  RunOptions o;
  o.graph_path = test::source_path("graphs/gpt_mlp_block.json");
  o.dry_run = true;
  o.backend = "cuda";
  o.arch = "sm_90";
  o.tp = 2;
  o.devices = {0, 1};
  const RunReport rep = run_graph(o);
  INFO((rep.error ? rep.error->message : ""));
  if (!kNcclBuilt) {  // the collectives have no CUDA kernel: the dry run says why
    REQUIRE(rep.error.has_value());
    CHECK(rep.error->message.find("NCCL") != std::string::npos);
    return;
  }
  REQUIRE(rep.result == RunReport::Result::dry_run);
  REQUIRE(rep.tp.has_value());
  CHECK(rep.tp->arena_bytes.size() == 2);
  REQUIRE(rep.tp->collectives.size() == 1);
  CHECK(rep.tp->collectives[0].type == "ALL_REDUCE");
  CHECK(rep.tp->collectives[0].tensor_bytes == 64 * 128 * 4);  // the f32 sum of [64, 128]
  CHECK(rep.tp->collectives[0].ring_bytes == 64 * 128 * 4);    // 2 (N-1)/N of it at N = 2
  CHECK(rep.printed_after.find("ALL_REDUCE") != std::string::npos);
  REQUIRE(rep.kernels.has_value());
  for (const KernelChoice& k : *rep.kernels)
    if (k.type == "ALL_REDUCE") CHECK(k.kernel == "nccl.all_reduce");
}

TEST_CASE("tensor parallel: collectives in the format, and a rank's program refused without --tp", "[tp]") {
  const std::string head = R"({"format": "gexec.graph", "version": 1, "name": "c", "tensors": [
      {"name": "x", "shape": [4, 6], "dtype": "f32"}, {"name": "y", "shape": [8, 6], "dtype": "f32"}],
    "ops": [{"op_type": "ALL_GATHER", "name": "g", "inputs": ["x"], "outputs": ["y"], "attrs": )";
  const std::string tail = R"(}], "outputs": ["y"]})";
  const Graph ok = test::load_ok(head + R"({"ranks": 2, "axis": 0})" + tail);
  CHECK(ok.ops[0].attrs.ranks == 2);
  auto no_ranks = load_graph_text(head + R"({"axis": 0})" + tail, "c.json", "");
  REQUIRE_FALSE(no_ranks.ok());
  CHECK(no_ranks.error().message.find("/ops/0/attrs/ranks") != std::string::npos);
  auto wrong = load_graph_text(head + R"({"ranks": 3, "axis": 0})" + tail, "c.json", "");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message.find("needs Y [12,6]") != std::string::npos);
  auto axis = load_graph_text(head + R"({"ranks": 2, "axis": 1})" + tail, "c.json", "");
  REQUIRE_FALSE(axis.ok());
  RunOptions o;
  o.graph = std::make_shared<const Graph>(ok);
  o.graph_path = "c.json";
  o.backend = "cpu";
  const RunReport rep = run_graph(o);
  CHECK(rep.exit_code() == Exit::bad_input);
  REQUIRE(rep.error.has_value());
  CHECK(rep.error->message.find("--tp") != std::string::npos);
}

TEST_CASE("tensor parallel: a collective's readers wait while independent ops run (the overlap order)", "[tp]") {
  // Two independent MLP pairs: the first pair's all-reduce is in flight while the second's products run.
  test::Builder b;
  std::vector<TensorId> outs;
  for (const char* s : {"a", "b"}) {
    const std::string p(s);
    const TensorId x = b.tensor("x" + p, {16, 32}, DType::f16), w1 = b.tensor("w1" + p, {32, 64}, DType::f16);
    const TensorId h = b.tensor("h" + p, {16, 64}, DType::f16), w2 = b.tensor("w2" + p, {64, 32}, DType::f16);
    const TensorId y = b.tensor("y" + p, {16, 32}, DType::f16);
    b.op(OpType::MATMUL, {x, w1}, h).name = "up_" + p;
    b.op(OpType::MATMUL, {h, w2}, y).name = "down_" + p;
    outs.push_back(y);
  }
  b.g.outputs = outs;
  auto p = shard_graph(b.g, {2, false});
  REQUIRE(p.ok());
  CHECK(verify(p->rank).empty());
  std::vector<std::string> order;
  for (const Op& op : p->rank.ops) order.push_back(op.name);
  auto at = [&](const std::string& prefix) {
    return std::find_if(order.begin(), order.end(), [&](const std::string& n) { return n.rfind(prefix, 0) == 0; }) - order.begin();
  };
  INFO(order.size());
  // all_reduce of ya, then b's products, then ya's reader (the cast to f16).
  CHECK(at("all_reduce_ya") < at("up_b"));
  CHECK(at("down_b") < at("down_a_cast"));
#if GEXEC_HAVE_CPU
  RunOptions o;
  o.graph = std::make_shared<const Graph>(b.g);
  o.graph_path = "two_pairs";
  o.backend = "cpu";
  o.tp = 2;
  CHECK(run_graph(o).result == RunReport::Result::pass);
#endif
}

#if GEXEC_HAVE_CPU
TEST_CASE("tensor parallel: a weight given as values is cut from those values", "[tp][cpu]") {
  std::string values;
  for (int i = 0; i < 32; ++i) values += (i ? ", " : "") + std::to_string(0.25 * (i % 7) - 0.5);
  const Graph g = test::load_ok(R"({"format": "gexec.graph", "version": 1, "name": "v", "tensors": [
      {"name": "x", "shape": [4, 8], "dtype": "f32"},
      {"name": "w", "shape": [8, 4], "dtype": "f32", "init": {"values": [)" + values + R"(]}},
      {"name": "y", "shape": [4, 4], "dtype": "f32"}],
    "ops": [{"op_type": "MATMUL", "inputs": ["x", "w"], "outputs": ["y"]}], "outputs": ["y"]})");
  RunOptions o;
  o.graph = std::make_shared<const Graph>(g);
  o.graph_path = "v.json";
  o.backend = "cpu";
  o.tp = 2;
  const RunReport rep = run_graph(o);
  INFO((rep.error ? rep.error->message : ""));
  CHECK(rep.result == RunReport::Result::pass);
  REQUIRE(rep.tp.has_value());
  CHECK(rep.tp->collectives.size() == 1);  // the output gathered along its columns
}
#endif
