// The declarations of the NCCL collectives (nccl_collective.cpp): compiled into the core without
// CUDA or NCCL headers, so that a dry-run of --tp plans them on any machine.
#include "gexec/kernels/declared.hpp"

namespace gexec {

std::vector<KernelDef> cuda_nccl_kernel_defs() {
  auto collective = [](const char* name, OpType op, const char* summary) {
    KernelDef d = declare_kernel(name, op, Backend::cuda, KernelImpl::nccl_collective, 10, 1, summary);
    d.batched = true;
    d.check = [](const Graph&, const Op& op, const DeviceCaps&, const KernelOptions&) {
      Verdict v;
      if (!kNcclBuilt) v.rejected = "gexec was built without NCCL (CMake found no nccl.h and libnccl)";
      else if (op.attrs.ranks < 1) v.rejected = "ranks must be at least 1";
      else if (op.type != OpType::ALL_REDUCE && op.attrs.axis > 0)
        v.notes.push_back("along axis " + std::to_string(op.attrs.axis) +
                          ": NCCL joins along the leading dimension, strided copies through a workspace do the rest");
      return v;
    };
    return d;
  };
  return {
      collective("nccl.all_reduce", OpType::ALL_REDUCE, "Y = the sum of every rank's X: ncclAllReduce on the device's stream"),
      collective("nccl.all_gather", OpType::ALL_GATHER,
                 "Y = every rank's X concatenated along the axis: ncclAllGather (and strided copies past axis 0)"),
      collective("nccl.reduce_scatter", OpType::REDUCE_SCATTER,
                 "Y = slice r along the axis of the sum of every rank's X: ncclReduceScatter (strided copies past axis 0)"),
  };
}

}  // namespace gexec
