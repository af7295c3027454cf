// What every launch of the skinny GEMM receives (skinny_gemm.cu builds it from the plan and the
// operands), the epilogue that all its kernels apply, and the Hopper path's launch
// (skinny_gemm_sm90.cu, built for sm_90a alone). Internal linkage for the device code: each file
// has its own copy.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "activate.cuh"
#include "element_f32.cuh"
#include "gexec/status.hpp"
#include "skinny_plan.hpp"

namespace gexec::cuda {

struct SkinnyArgs {
  const void* a;
  const void* w;
  void* c;
  const void* bias;
  const void* res;
  float* partial;  // [splits][m][n] where the plan has a workspace
  int64_t m, n, k, split_k;
  int splits;
  float alpha, beta;
  DType c_t, bias_t, res_t;
  Act act;
  // The seeded error skinny-drop-split (fault.hpp): what each path leaves out of its sums.
  int warps_used;  // mma.sync with one split: the warps whose sums are added (the last one's lost)
  int splits_used; // split K: the splits whose sums are added (the last one's lost)
  bool drop_step;  // the Hopper path: its last 64-K step left out
};

namespace {

// alpha * sum + beta * r + b, then the activation, in f32 (r and b read by the caller, used where
// the product has a residual and a bias); rounded once to C's dtype by the caller.
__device__ __forceinline__ float skinny_finish(const SkinnyArgs& p, float sum, float r, float b) {
  float v = p.alpha * sum;
  if (p.res) v += p.beta * r;
  if (p.bias) v += b;
  return activate(p.act, v, p.c_t != DType::f32);
}

// The same, reading R[m, n] and bias[n].
__device__ __forceinline__ float skinny_epilogue(const SkinnyArgs& p, int64_t m, int64_t n, float sum) {
  return skinny_finish(p, sum, p.res ? load_f32(p.res, p.res_t, m * p.n + n) : 0.0f,
                       p.bias ? load_f32(p.bias, p.bias_t, n) : 0.0f);
}

}  // namespace

// The [N,K] weight on WGMMA fed by TMA (plan.wgmma: an sm_90 device); one launch, K not split.
Status launch_skinny_sm90(const SkinnyPlan& plan, const SkinnyArgs& args, cudaStream_t stream);

}  // namespace gexec::cuda
