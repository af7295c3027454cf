// The grouped GEMM's Hopper main launch (grouped_gemm_sm90.cu, compiled for sm_90a only): WGMMA
// fed by TMA, for the plans that plan_grouped_gemm marks `wgmma`. grouped_gemm.cu's launch
// enqueues its prep launch (offsets checked, tile_end written for the plan's block_m and n_tiles)
// and then this. Pure declarations: g++ and nvcc both compile this header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gexec/status.hpp"
#include "grouped_gemm.hpp"

namespace gexec::cuda {

// The shape conditions of the WGMMA kernel (beyond the plan's general ones): W [G,N,K], K a
// positive multiple of 64, N a positive multiple of block_n (128 or 256), G * N rows of W and the
// tokens addressable by TMA's int32 coordinates. Empty when it fits, else why not.
std::string grouped_sm90_unfit(const GroupedGemmPlan& p);

// Enqueues the persistent WGMMA kernel on `stream`: the tensor maps of X and W are encoded on the
// host from o.x and o.w (cheap, no device call: capturable), `tile_end` is the workspace that
// grouped_prep filled. No synchronisation, no allocation.
Status launch_grouped_sm90(const GroupedGemmPlan& p, const GroupedOperands& o, const int32_t* tile_end,
                           cudaStream_t stream);

}  // namespace gexec::cuda
