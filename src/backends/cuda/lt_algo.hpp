// What gexec reads of cuBLASLt's algorithms and asks of its heuristic, shared by the cuBLASLt GEMM
// and the FP8 product: configuration attributes, split-K, the reduction schemes it allows, and the
// candidates of one product (LtCandidates: the query, the filter, the names, the chosen one) with
// the precision their epilogues add.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_device.hpp"
#include "raii.hpp"

namespace gexec::cuda {

// The relative error of the tanh in cuBLASLt's GELU / GELU_BIAS epilogues. They evaluate the
// tanh form with the hardware's approximate tanh (PTX tanh.approx.f32: a maximum relative error
// of about 2^-10.99 of tanh over its range); 2^-10 leaves a factor of about 2 for the roundings of
// its argument's cubic around it. Measured on the H200 (cuBLASLt 13.1): the f32-output GELU runs
// failed the normwise rule by a systematic error of this kind (max_abs 5e-6, near x = -0.24, a
// relative tanh error of about 2^-12), and f16 outputs near 1 + tanh(u) -> 0 were off by 1e-4.
constexpr double kCublasLtGeluTanhRel = 0x1p-10;

// One configuration attribute of an algorithm, read into a zeroed 64-bit value (they are 16 or 32
// bits wide; all little-endian); 0 when it cannot be read.
inline uint64_t algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  // cuBLASLt wants the attribute's exact size: asked first with an empty buffer, else tried.
  size_t size = 0;
  const bool asked = cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size) == CUBLAS_STATUS_SUCCESS &&
                     size > 0 && size <= sizeof(uint64_t);
  for (size_t s : {asked ? size : size_t(4), size_t(4), size_t(2), size_t(8)}) {
    uint64_t v = 0;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, s, &written) == CUBLAS_STATUS_SUCCESS) return v;
  }
  return 0;
}

// A split-K algorithm's reduction step stores the product in D's dtype, and a bias and activation
// are applied to that (seen on the H200 with the BIAS epilogue as well as GELU's): one rounding
// more than the graph's GEMM_BIAS_ACT, which the kernels declare (Precision::product_rounded).
inline bool splits_k(const cublasLtMatmulAlgo_t& algo) { return algo_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) > 1; }

// The workspace the default choice is asked for: the heuristic's first answer within it leads the
// candidates, which --autotune times within all of kGemmWorkspaceBytes. PyTorch's F.linear asks
// with 1 MiB. On an H100 (cuBLASLt 13.1, f16, bias epilogue, 2026-12-06), allowed 32 MiB the
// heuristic's first for 256 x 4096 x 16384 was split-K 2 on 0.48 waves, 65.5 us (67.2 with a
// residual as C); within 1 MiB it was a 0.97-wave tile without split, 63.9 (65.6). Other shapes:
// docs/onnx.md, "The default cuBLASLt choice".
constexpr size_t kDefaultChoiceWorkspace = size_t(1) << 20;

// Full f32 products (no TF32, on the CUDA cores) keep the heuristic's first answer within the
// whole workspace as their default: on an H100 (2026-12-07) its first within 1 MiB took 730 us for
// 256 x 11008 x 4096 [N, K] against 470, and 928 against 695 for 256 x 4096 x 16384 (docs/onnx.md).
inline bool small_workspace_default(cublasComputeType_t compute, cudaDataType_t ab) {
  return !(compute == CUBLAS_COMPUTE_32F && ab == CUDA_R_32F);
}

// Split-K partial sums reduced in the compute type (f32) only: the INPLACE and OUTPUT_TYPE schemes
// round every partial sum to D's dtype and add them in it, which on the H200 put small f16 results
// of a 127x65x33 product off by up to 9% (errors of about ulp(partial sum)).
inline Status allow_compute_type_reductions_only(const MatmulPreference& pref) {
  return set_attribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                       uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE));
}

// The algorithms one product may run with, in order (the first is the default), and the one
// chosen: the Tunable side of both cuBLASLt kernels. A candidate is a heuristic result, whether
// the heuristic proposed it or cublasLtMatmulAlgoCheck vetted an algorithm found otherwise (an
// enumeration through cublasLtMatmulAlgoGetIds / AlgoInit): add() takes either.
class LtCandidates {
 public:
  // How many of the heuristic's candidates are asked for (and kept for --autotune).
  static constexpr int kHeuristicMax = 32;

  // What the heuristic answered: its status and how many results it returned.
  struct Answer {
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    int returned = 0;
  };
  // Asks the heuristic for up to `max` algorithms for the product the descriptors describe and
  // adds the usable ones; an error status adds none (the caller says what it means).
  Answer query_heuristic(cublasLtHandle_t handle, const MatmulDesc& desc, const MatrixLayout& a,
                         const MatrixLayout& b, const MatrixLayout& c, const MatrixLayout& d,
                         const MatmulPreference& pref, int max = kHeuristicMax) {
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(max));
    Answer ans;
    ans.status = cublasLtMatmulAlgoGetHeuristic(handle, desc.get(), a.get(), b.get(), c.get(), d.get(), pref.get(),
                                                max, results.data(), &ans.returned);
    for (int i = 0; ans.status == CUBLAS_STATUS_SUCCESS && i < ans.returned && i < max; ++i)
      add(results[size_t(i)]);
    return ans;
  }
  // Whether a result can be a candidate: cuBLASLt accepted it and its workspace fits gexec's.
  static bool usable(const cublasLtMatmulHeuristicResult_t& r) {
    return r.state == CUBLAS_STATUS_SUCCESS && r.workspaceSize <= kGemmWorkspaceBytes;
  }
  // Keeps a usable candidate; false otherwise.
  bool add(const cublasLtMatmulHeuristicResult_t& r) {
    if (!usable(r)) return false;
    list_.push_back(r);
    return true;
  }
  // Makes r the first candidate (the default): moved there where the list holds its configuration,
  // put there otherwise. False (and nothing changes) where r is not usable.
  bool make_first(const cublasLtMatmulHeuristicResult_t& r) {
    if (!usable(r)) return false;
    const std::string wanted = config_name(r.algo);
    int i = 0;
    while (i < count() && name(i) != wanted) ++i;
    if (i < count()) list_.erase(list_.begin() + i);
    list_.insert(list_.begin(), r);
    return true;
  }
  void clear() {
    list_.clear();
    chosen_ = 0;
  }

  int count() const { return int(list_.size()); }
  bool empty() const { return list_.empty(); }
  const cublasLtMatmulHeuristicResult_t& at(int i) const { return list_[size_t(i)]; }
  int chosen() const { return chosen_; }
  // The chosen algorithm, what cublasLtMatmul runs.
  const cublasLtMatmulAlgo_t& algo() const { return list_[size_t(chosen_)].algo; }
  // False (and nothing changes) when there is no candidate i.
  bool select(int i) {
    if (i < 0 || i >= count()) return false;
    chosen_ = i;
    return true;
  }
  // Whether the chosen algorithm splits K (splits_k); false when there is none.
  bool chosen_splits_k() const { return chosen_ >= 0 && chosen_ < count() && splits_k(algo()); }

  // The candidate's algorithm configuration (config_name); "none" for a candidate that does not
  // exist.
  std::string name(int i) const { return i < 0 || i >= count() ? "none" : config_name(list_[size_t(i)].algo); }
  // An algorithm's configuration (id, tile, stages, split-K, ...): what the tuning cache stores to
  // find it again.
  static std::string config_name(const cublasLtMatmulAlgo_t& algo) {
    auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr) { return algo_attr(algo, attr); };
    return "algo " + std::to_string(int32_t(get(CUBLASLT_ALGO_CONFIG_ID))) +
           " tile " + std::to_string(get(CUBLASLT_ALGO_CONFIG_TILE_ID)) +
           " stages " + std::to_string(get(CUBLASLT_ALGO_CONFIG_STAGES_ID)) +
           " splitK " + std::to_string(get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM)) +
           " reduction " + std::to_string(get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)) +
           " swizzle " + std::to_string(get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)) +
           " custom " + std::to_string(get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)) +
           " inner " + std::to_string(get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)) +
           " cluster " + std::to_string(get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
  }

 private:
  std::vector<cublasLtMatmulHeuristicResult_t> list_;
  int chosen_ = 0;
};

// What cuBLASLt's epilogues add to a product's declared precision (verify/bound.hpp), the same
// for both families: a GELU epilogue evaluates its tanh approximately (kCublasLtGeluTanhRel) and
// rounds the product to D's dtype before the bias; a split-K algorithm rounds the product before
// any bias or activation (splits_k). `epilogue_work`: the product has a bias or an activation;
// `fused_gelu`: cuBLASLt's epilogue applies a GELU.
inline void add_epilogue_precision(Precision& p, bool epilogue_work, bool fused_gelu, const LtCandidates& c) {
  if (fused_gelu) {
    p.gelu_tanh_rel = kCublasLtGeluTanhRel;
    p.product_rounded = true;
  }
  if (epilogue_work && c.chosen_splits_k()) p.product_rounded = true;
}

}  // namespace gexec::cuda
