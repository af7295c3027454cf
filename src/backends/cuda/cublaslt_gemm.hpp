// The cuBLASLt GEMM kernel: MATMUL and GEMM_BIAS_ACT as one cached cuBLASLt plan per op.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "cuda_device.hpp"
#include "gemm_plan.hpp"
#include "lt_algo.hpp"
#include "raii.hpp"

namespace gexec::cuda {

class CublasLtGemm final : public Kernel, public Tunable {
 public:
  static Result<std::unique_ptr<CublasLtGemm>> create(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                      const Op& op, const Binding& binding,
                                                      const KernelOptions& options = {});
  ~CublasLtGemm() override;

  // Allocates the scratch buffers, converts what is fixed before the runs, builds the
  // descriptors and queries the heuristic once.
  Status prepare() override;
  // Per-run conversions, one cublasLtMatmul, and the bias/activation kernel where not fused.
  Status run() override;

  // Why the bias and activation are not in the epilogue; empty when they are (or there are none).
  std::string note() const override { return fallback_reason_; }
  bool fused() const { return fused_; }
  Tunable* tunable() override { return this; }
  // What the bound must allow for the way this product runs, once prepared (verify/bound.hpp):
  // - TF32 products for f32 operands;
  // - unfused (refused epilogue, colmajor C): the product is stored in C's dtype and a separate
  //   kernel adds the bias / applies the activation in f32, one rounding more than the graph's
  //   GEMM_BIAS_ACT; that kernel's GELU is tanh-form through expf, within f32 ulps;
  // - the fused GELU epilogues: the approximate tanh above, and the product rounded to C's dtype
  //   before the bias (seen on the H200: errors of about ulp(product) where product + bias cancels,
  //   only with GELU; the BIAS and RELU_BIAS epilogues add the bias to the f32 accumulator,
  //   except in split-K algorithms, whose reduction step stores the product first).
  Precision precision() const override;

  // Tunable, over the heuristic's candidates: the first is used unless another is selected.
  int variant_count() const override { return candidates_.count(); }
  int selected_variant() const override { return candidates_.chosen(); }
  Status select_variant(int i) override;
  // The candidate's algorithm configuration (id, tile, stages, split-K, ...): what reloads it.
  std::string variant_name(int i) const override { return candidates_.name(i); }
  std::string algo_description() const override { return variant_name(selected_variant()); }
  std::string signature() const override { return signature_; }
  // A and C (and B) move to the given buffers; the bias keeps its own, whose address (or that of
  // its converted or padded copy) is part of the cuBLASLt descriptor.
  bool rebind(const Binding& b) override;
  // Every operand not fixed before the runs moves, the bias too (in the descriptor where the
  // epilogue reads it directly); false where one is less aligned than the one the algorithm was
  // chosen for, or a fixed one would move.
  bool move_operands(const Binding& b) override;
  // Whether the operands are copied into buffers with 16-byte rows (gemm_padding.hpp), and why.
  const PadPlan& padding() const { return plan_.pad; }

 private:
  CublasLtGemm() = default;
  // Descriptors, layouts and the heuristic for the fused epilogue or the plain product.
  // Sets *refused (instead of failing) when cuBLASLt has no algorithm for it.
  Status build(bool fuse, bool* refused);
  std::string describe() const;
  // What cuBLASLt reads and writes: the padded buffers where padded, else the converted or
  // stored operands, and D's scratch buffer where the output is converted afterwards.
  struct Operands {
    const void* x = nullptr;
    const void* y = nullptr;
    void* d = nullptr;
  };
  Operands operands() const;
  // Copies the padded X and Y whose values are fixed before the runs (fixed: once, from
  // prepare()) or change between runs (every run) into their padded buffers; the padding stays zero.
  Status pad_operands(bool fixed) const;
  // Converts and/or pads the bias into the buffer the epilogue reads, where it is not the bias itself.
  Status refresh_bias();

  CudaDevice* device_ = nullptr;
  std::string op_name_;
  GemmPlan plan_;     // how the product runs (gemm_plan.hpp), as the kernel table's check saw it
  GemmEpilogue epi_;  // plan_.epi, until cuBLASLt refuses the fused epilogue (then a separate kernel)
  const void* a_ = nullptr;
  const void* b_ = nullptr;
  const void* bias_ = nullptr;
  void* c_ = nullptr;
  const void* res_ = nullptr;  // the residual R (plan_.residual), read as cuBLASLt's C or converted into D

  // Scratch buffers owned by the kernel (empty when not needed).
  DeviceMemory a_conv_, b_conv_, bias_conv_, d_scratch_;

  bool prepared_ = false;
  bool algo_space_all_ = false;  // KernelOptions::algo_space_all: the enumerated space after the heuristic's candidates
  bool fused_ = false;
  std::string fallback_reason_;
  void* workspace_ = nullptr;
  MatmulDesc desc_;
  MatrixLayout layout_x_, layout_y_, layout_d_;
  MatmulPreference pref_;
  LtCandidates candidates_;
  std::string signature_;
  DeviceMemory x_pad_, y_pad_, d_pad_;  // padded X, Y and D (allocated only when padded)
  DeviceMemory bias_pad_;               // the bias, zero-padded to D's padded rows
};

Result<std::unique_ptr<Kernel>> make_cublaslt_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                   const Op& op, const Binding& binding, const KernelOptions& options);

}  // namespace gexec::cuda
