// The CPU ranks' collectives in host memory (communicator.hpp): the test double for NCCL.
#include "gexec/exec/communicator.hpp"

#include <cstring>

#include "gexec/ir/dtype.hpp"

namespace gexec {
namespace {

int64_t product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) n *= s[i];
  return n;
}

}  // namespace

Status check_collective_comm(const Op& op, const Communicator* comm, const std::string& kind) {
  if (!comm)
    return bad_input("op " + op.name + " is " + std::string(op_type_name(op.type)) +
                     ", a collective: it runs only in a sharded run (gexec run --tp N), whose ranks share " + kind);
  if (op.attrs.ranks != comm->ranks())
    return bad_input("op " + op.name + " is over " + std::to_string(op.attrs.ranks) + " ranks; the run has " +
                     std::to_string(comm->ranks()));
  return {};
}

Status HostCommunicator::contribute(int rank, const CollectiveCall& call) {
  if (rank < 0 || rank >= ranks()) return runtime_error("collective: rank " + std::to_string(rank) + " of " + std::to_string(ranks()));
  if (seen_[size_t(rank)])
    return runtime_error("collective " + std::string(op_type_name(call.type)) + ": rank " + std::to_string(rank) +
                         " called twice before every rank had called once (the ranks were not stepped together)");
  for (size_t r = 0; r < seen_.size(); ++r) {
    if (!seen_[r]) continue;
    const CollectiveCall& o = calls_[r];
    if (o.type != call.type || o.dtype != call.dtype || o.in_shape != call.in_shape || o.axis != call.axis)
      return runtime_error("collective " + std::string(op_type_name(call.type)) + " of rank " + std::to_string(rank) +
                           " disagrees with rank " + std::to_string(r) + "'s " + std::string(op_type_name(o.type)) +
                           " (op, dtype, shape or axis)");
  }
  calls_[size_t(rank)] = call;
  seen_[size_t(rank)] = true;
  if (++pending_ < ranks()) return {};
  complete(calls_);
  pending_ = 0;
  std::fill(seen_.begin(), seen_.end(), false);
  return {};
}

void HostCommunicator::complete(const std::vector<CollectiveCall>& calls) {
  const CollectiveCall& c = calls[0];
  const int64_t n = int64_t(calls.size());
  const size_t esize = size_t(dtype_size(c.dtype));
  const int64_t count = product(c.in_shape, 0, c.in_shape.size());
  if (c.type == OpType::ALL_GATHER) {
    // out[o][q * inner + i] = in_q[o][i] on every rank: the inputs concatenated along the axis.
    const int64_t outer = product(c.in_shape, 0, size_t(c.axis)), inner = count / std::max<int64_t>(outer, 1);
    const size_t chunk = size_t(inner) * esize;
    for (const CollectiveCall& to : calls)
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t q = 0; q < n; ++q)
          std::memcpy(static_cast<char*>(to.out) + size_t(o * n + q) * chunk,
                      static_cast<const char*>(calls[size_t(q)].in) + size_t(o) * chunk, chunk);
    return;
  }
  // The sum over the ranks in rank order, in f32, rounded once to the dtype.
  std::vector<float> sum(size_t(count), 0.0f);
  for (const CollectiveCall& from : calls)
    for (int64_t i = 0; i < count; ++i) sum[size_t(i)] += load_as_float(from.in, c.dtype, i);
  if (c.type == OpType::ALL_REDUCE) {
    for (const CollectiveCall& to : calls)
      for (int64_t i = 0; i < count; ++i) store_from_float(to.out, c.dtype, i, sum[size_t(i)]);
    return;
  }
  // REDUCE_SCATTER: rank r keeps slice r along the axis of the sum.
  const int64_t outer = product(c.in_shape, 0, size_t(c.axis)), inner = count / std::max<int64_t>(outer, 1) / n;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        store_from_float(calls[size_t(r)].out, c.dtype, o * inner + i, sum[size_t(o * n * inner + r * inner + i)]);
}

}  // namespace gexec
