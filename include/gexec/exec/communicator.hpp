// The ranks of a sharded run (gexec run --tp N, docs/distributed.md) and the collectives between
// them. A device joins a communicator with its rank (Device::join); its collective kernels
// (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER) reach the other ranks through it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/op.hpp"
#include "gexec/status.hpp"

namespace gexec {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int ranks() const = 0;
  // For the report: what carries the collectives, e.g. "NCCL 2.28.3" or "host memory (CPU ranks)".
  virtual std::string describe() const = 0;
  // One process enqueues every rank's part of a collective: the N calls go between these (NCCL's
  // group, without which the first rank's call would wait for the others forever).
  virtual Status group_begin() { return {}; }
  virtual Status group_end() { return {}; }
};

// For a backend's collective kernel of `op`: an error where `comm` (the device's communicator, cast
// to the backend's kind; null where it is not one) cannot carry it: outside a sharded run, or over
// another number of ranks. `kind` says what the backend's ranks share ("an NCCL communicator").
Status check_collective_comm(const Op& op, const Communicator* comm, const std::string& kind);

// One rank's part of a collective: its op, its dtype, the shape of its input, and its buffers.
struct CollectiveCall {
  OpType type = OpType::ALL_REDUCE;
  DType dtype = DType::f32;
  std::vector<int64_t> in_shape;  // this rank's input
  int axis = 0;                   // ALL_GATHER, REDUCE_SCATTER
  const void* in = nullptr;
  void* out = nullptr;
};

// The CPU ranks' communicator: a test double for NCCL, not a distributed engine. The N ranks run
// in one process, stepped op by op (a collective's N calls before the next op of any rank); each
// rank's collective kernel hands its buffers here, and the last rank's call computes the
// collective for all of them, in host memory: sums in f32 in rank order, rounded once to the dtype.
class HostCommunicator : public Communicator {
 public:
  explicit HostCommunicator(int ranks) : calls_(size_t(ranks)), seen_(size_t(ranks), false) {}
  int ranks() const override { return int(calls_.size()); }
  std::string describe() const override { return "host memory (CPU ranks in one process, a test double for NCCL)"; }
  // Rank `rank`'s part; the collective runs when every rank has given its part. Calls that disagree
  // (another op, dtype or shape), or a rank calling twice before the others, are errors: the ranks
  // were not stepped together.
  Status contribute(int rank, const CollectiveCall& call);

 protected:
  // The collective over the N ranks' parts, rank order; virtual so that a test can break it.
  virtual void complete(const std::vector<CollectiveCall>& calls);

 private:
  std::vector<CollectiveCall> calls_;
  std::vector<bool> seen_;
  int pending_ = 0;
};

}  // namespace gexec
