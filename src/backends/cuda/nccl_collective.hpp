// The collectives of a sharded run on CUDA (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER) over NCCL:
// one communicator per device, all of them driven by one process (docs/distributed.md).
#pragma once

#include <memory>

#include "cuda_device.hpp"

namespace gexec::cuda {

// The kernel of one collective op on device `dev`, which must have joined an NCCL communicator
// (open_nccl_communicator); an error that says why otherwise (or where gexec was built without NCCL).
Result<std::unique_ptr<Kernel>> make_nccl_collective(CudaDevice& dev, const Graph& g, const Op& op, const Binding& b);

}  // namespace gexec::cuda
