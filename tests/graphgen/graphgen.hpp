// A generator of random valid graphs (built as IR, not JSON), the judge that runs one through the
// passes and the CPU backend against the reference, and the shrinker that minimises a failing one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"

namespace gexec::graphgen {

// splitmix64: the same seed gives the same numbers on every machine and standard library (the
// <random> distributions do not promise that).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next();
  int below(int n);           // 0 .. n-1
  int range(int lo, int hi);  // lo .. hi
  bool chance(double p);
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(below(int(v.size())))];
  }

 private:
  uint64_t s_;
};

struct GenOptions {
  int max_ops = 8;  // ops per graph: 1 .. max_ops
  int max_dim = 9;  // every dimension: 1 .. max_dim
};

// A graph that is valid by docs/graph-format.md: every op type, dtype, layout, f8 scale (tensor,
// row, column), amax outputs, residuals, batched and transposed products, FUSED_ELEMENTWISE groups,
// every init form but file (no .npy is written), constants, intermediates kept as outputs, unused
// inputs, one-element and odd shapes. A function of the seed alone.
Graph generate_graph(uint64_t seed, const GenOptions& opts = {});

// How a graph is run: as `gexec run FILE --backend cpu` with these options. With `emit`, the graph
// first goes through those passes and is written out, as `--passes EMIT --emit-graph E` does,
// and E is what runs: what the passes write must load, run and check like any graph file.
struct RunSpec {
  std::string passes = "default";  // --passes: "default", "none" or "a,b,c"
  std::string verify = "auto";     // --verify: auto, sample or exact
  int64_t samples = 4096;          // --samples, for sample
  std::string emit;                // passes whose result is written and run; empty: the graph itself
  std::string backend = "cpu";     // --backend: cpu, or cuda (on a machine with a GPU)
  int tp = 0;                      // --tp: the graph cut for this many ranks; 0: not cut
  bool reduce_scatter = false;     // --tp-reduce reduce-scatter
  std::string args() const;        // "--backend cpu --passes a,b --verify sample --samples 7", or the two commands
};

// The runs of graph `seed`: the default pipeline with the default check; a random pass list
// (repeats and any order, or none) with a random check (auto; sample, of a few elements; or
// exact, which draws integer inputs and requires bit equality); the graph another random pass
// list emits, run with no passes or the default ones; and the graph cut for 2 to 4 ranks (--tp,
// either reduce mode), checked against its unsharded reference. A function of the seed alone.
std::vector<RunSpec> random_runs(uint64_t seed);

// overflow: the check failed only on outputs whose reference itself is not finite (the graph's
// values leave its dtypes' range): such an element never matches (compare.hpp), by design.
// unsupported: on the CUDA backend, no kernel for an op (the refusals the format lists for it,
// such as an FP8 product's colmajor C); the CPU backend runs every valid graph, so there a
// selection failure is a failure.
enum class Outcome { pass, refused, overflow, unsupported, failed };
std::string_view outcome_name(Outcome o);

struct Verdict {
  Outcome outcome = Outcome::pass;
  // What failed: "loader" (a valid graph refused with an internal message), "round trip" (saved
  // and loaded, it differs), "emitted" (what the passes wrote is refused), "internal" (exit 3),
  // "check" (exit 1), "crash", "hang".
  std::string kind;
  std::string message;  // the refusal or the failure, as gexec says it
};

// Saves g as a graph file, loads it back (a refusal, exit 2, is Outcome::refused with the
// loader's lines), then runs it on run.backend as `run` says, every pass's result verified,
// every output checked against the reference of the graph as loaded.
Verdict judge(const Graph& g, const RunSpec& run);

// Smaller versions of g while `still_fails` holds of them: ops dropped (their results becoming
// inputs), outputs dropped with the ops only they needed, dimensions shrunk, attributes, inits,
// scales and layouts reset to their defaults. Tries at most `max_candidates` graphs; every
// candidate passes verify().
Graph shrink(Graph g, const std::function<bool(const Graph&)>& still_fails, int max_candidates = 3000);

}  // namespace gexec::graphgen
