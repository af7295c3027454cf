// Tensor parallelism (gexec run --tp N, docs/distributed.md): a graph cut into the program every
// rank runs, Megatron style. Products whose weight is a graph input are split by the weight's
// output columns (column-parallel) or, where their A arrives cut along K, by K (row-parallel: a
// partial product per rank, summed by ALL_REDUCE or REDUCE_SCATTER in f32, then the bias once, the
// residual, the activation and the rounding as elementwise ops); elementwise ops keep a cut
// tensor cut; what cannot be cut runs whole on every rank after ALL_GATHER. The outputs end whole
// on every rank, under their own names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct ShardOptions {
  int ranks = 1;
  // The row-parallel sums by REDUCE_SCATTER along the rows (each rank keeps its rows, gathered
  // where a whole tensor is needed), instead of ALL_REDUCE.
  bool reduce_scatter = false;
};

// A graph input of the rank graph that holds, on rank r, slice r of the unsharded graph's input
// `of` along `axis` (of N equal slices): its values are the unsharded input's, cut.
struct ShardedInput {
  std::string name, of;
  int axis = 0;
};

struct ShardPlan {
  Graph rank;  // the program of every rank: the same ops; the sharded inputs hold each rank's slice
  int ranks = 1;
  std::vector<ShardedInput> inputs;
  std::vector<std::string> notes;  // per product and per gather: what became what, or why not
};

// The plan for g over o.ranks ranks; bad_input for ranks < 1 or a graph that already holds
// collectives. Every rank graph passes verify().
Result<ShardPlan> shard_graph(const Graph& g, const ShardOptions& o);

// The bytes one rank sends over a ring for collective `op` of a rank graph: 2 (N-1)/N of the
// tensor for ALL_REDUCE, (N-1)/N of the whole tensor for ALL_GATHER and REDUCE_SCATTER.
int64_t collective_ring_bytes(const Graph& rank, const Op& op);
// The bytes of the whole tensor a collective reduces or gathers.
int64_t collective_tensor_bytes(const Graph& rank, const Op& op);

// Slice `r` of `ranks` along `axis` of the stored bytes of `whole` (any layout, logical axis).
std::vector<uint8_t> slice_bytes(const Tensor& whole, const std::vector<uint8_t>& bytes, int axis, int ranks, int r);

}  // namespace gexec
