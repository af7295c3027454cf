// The cuBLASLt FP8 product (kernel table: cublaslt.fp8_gemm_bias_act, cublaslt.fp8_matmul): the
// TN arrangement of fp8_plan.hpp, scale pointers (tensor-wide, outer-vector, or block scales
// copied into cuBLASLt's layout), the D scale and amax of an f8 output, fast accumulation and the
// bias epilogues; one cached plan per op, the heuristic's candidates as autotuning variants.
#include "fp8_gemm.hpp"

#include <cublasLt.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"
#include "elementwise.hpp"
#include "f8_convert.hpp"
#include "fp8_plan.hpp"
#include "gexec/ir/block_scale.hpp"
#include "lt_algo.hpp"
#include "lt_types.hpp"
#include "raii.hpp"

namespace gexec::cuda {
namespace {

class Fp8Gemm final : public Kernel, public Tunable {
 public:
  Fp8Gemm(CudaDevice& device, const Graph& g, const Op& op, const Binding& b, Fp8Plan plan)
      : device_(device), name_(op.name), p_(std::move(plan)), alpha_(float(op.attrs.alpha)),
        fast_accum_(op.attrs.fast_accum), act_(op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none),
        a_t_(g.tensor(op.inputs[0])), b_t_(g.tensor(op.inputs[1])), c_t_(g.tensor(op.outputs[0])) {
    a_ = b.inputs[0];
    b_ = b.inputs[1];
    if (p_.has_bias) bias_ = b.inputs[2];
    d_ = b.outputs[0];
    if (b.outputs.size() > 1) amax_ = b.outputs[1];
    if (p_.block) {
      a_slot_ = scale_slot(g, op, op.inputs[0]);
      b_slot_ = scale_slot(g, op, op.inputs[1]);
      bind_block_scales(b);
    }
  }

  Status prepare() override {
    if (prepared_) return {};
    const GemmShape& s = p_.shape;
    const cudaStream_t stream = device_.stream();
    auto ws = device_.gemm_workspace();
    if (!ws) return ws.error();
    workspace_ = *ws;
    auto alloc = [](DeviceMemory& m, size_t bytes) -> Status {
      auto r = DeviceMemory::allocate(bytes);
      if (!r) return r.error().with("allocating an FP8 scratch buffer");
      m = std::move(*r);
      return {};
    };
    // The sizes cuBLASLt sees: padded to multiples of 16 where the product's are not.
    const int64_t M = dim_m(), N = dim_n(), K = dim_k();
    // The K-contiguous copies (zero-filled where padded); a constant operand's copy is made here, once.
    const int64_t batch = s.batch, b_count = s.b_batched ? s.batch : 1;
    if (p_.pad) {
      GEXEC_TRY(alloc(a_k_, size_t(batch * M * K)));
      GEXEC_TRY(alloc(b_k_, size_t(b_count * N * K)));
      if (p_.a_once) GEXEC_TRY(pack_a(stream));
      if (p_.b_once) GEXEC_TRY(pack_b(stream));
      if (p_.d_padded) GEXEC_TRY(alloc(d_pad_, size_t(batch * M * N) * size_t(dtype_size(c_t_.dtype))));
    } else {
      if (p_.transpose_a) {
        GEXEC_TRY(alloc(a_k_, size_t(s.m * s.k)));
        if (p_.a_once) GEXEC_TRY(launch_transpose_u8(a_, a_k_.get(), s.m, s.k, stream));
      }
      if (p_.transpose_b) {
        GEXEC_TRY(alloc(b_k_, size_t(s.n * s.k)));
        if (p_.b_once) GEXEC_TRY(launch_transpose_u8(b_, b_k_.get(), s.n, s.k, stream));
      }
    }
    // Scales as f32, in the column-major view: cuBLASLt's A is our B (N), its B our A (M).
    std::vector<float> sa, sb;
    // Padded rows and columns (zeros) take scale 1; repeated rows their source row's.
    auto expand = [](const Tensor& t, int64_t count, int64_t real, bool vector, bool repeat) {
      std::vector<float> v;
      if (!vector) return std::vector<float>{float(t.scale.values[0])};
      for (int64_t i = 0; i < count; ++i) {
        const int64_t from = repeat ? std::min(i, real - 1) : i;
        v.push_back(from >= real ? 1.0f : float(t.scale.axis < 0 ? t.scale.values[0] : t.scale.values[size_t(from)]));
      }
      return v;
    };
    if (p_.block) {
      // Arranged on the device from S (below); room for cuBLASLt's layouts here.
      sa.assign(size_t(p_.b_scale.count()), 1.0f);
      sb.assign(size_t(p_.a_scale.count()), 1.0f);
    } else {
      sa = expand(b_t_, N, s.n, p_.outer_vector, false);
      sb = expand(a_t_, M, s.m, p_.outer_vector, p_.repeat_a_rows);
    }
    // Each scale array starts on its own 256-byte boundary: cuBLASLt refuses the matmul
    // (CUBLAS_STATUS_NOT_SUPPORTED, after its heuristic accepted it) when the B scale sits 4 bytes
    // after the A scale, as the H200 showed; 64 bytes apart it runs.
    constexpr size_t kScaleAlign = 256 / sizeof(float);
    auto aligned = [](size_t n) { return (n + kScaleAlign - 1) / kScaleAlign * kScaleAlign; };
    const size_t b_at = aligned(sa.size()), d_at = b_at + aligned(sb.size());
    std::vector<float> host(d_at + 1, 1.0f);
    std::copy(sa.begin(), sa.end(), host.begin());
    std::copy(sb.begin(), sb.end(), host.begin() + std::ptrdiff_t(b_at));
    host[d_at] = is_f8(c_t_.dtype) ? float(1.0 / c_t_.scale.values[0]) : 1.0f;  // D scale
    GEXEC_TRY(alloc(scales_, host.size() * sizeof(float)));
    // On the product's stream, and waited for: `host` is a local, and a plain cudaMemcpy runs on
    // the legacy stream, which is not ordered with our non-blocking one (f8_cast.cpp).
    GEXEC_CUDA_TRY(
        cudaMemcpyAsync(scales_.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
    float* dev = static_cast<float*>(scales_.get());
    lt_a_scale_ = dev;
    lt_b_scale_ = dev + b_at;
    const float* d_scale = dev + d_at;
    if (p_.block) GEXEC_TRY(arrange_scales(stream, true));
    if (is_f8(c_t_.dtype)) GEXEC_TRY(alloc(c16_, size_t(batch * M * N) * size_t(dtype_size(p_.c16))));
    // The bias cuBLASLt reads: converted, or (padded) copied beside zeros for the padded columns.
    if (p_.has_bias && (p_.bias_in != p_.bias_read || p_.pad)) {
      const size_t bytes = size_t(N) * size_t(dtype_size(p_.bias_read));
      GEXEC_TRY(alloc(bias_conv_, bytes));
      if (N != s.n) GEXEC_CUDA_TRY(cudaMemsetAsync(bias_conv_.get(), 0, bytes, stream));
      if (p_.bias_once) GEXEC_TRY(stage_bias(stream));
    }

    auto desc = make_matmul_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (!desc) return desc.error();
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(CUBLAS_OP_T)));
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(CUBLAS_OP_N)));
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(lt_a_scale_)));
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(lt_b_scale_)));
    if (p_.outer_vector) {
      const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
      GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode));
      GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode));
    }
    if (p_.block) {
      auto mode = [](const ScaleArrangement& x) {
        return int32_t(x.two_d ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F
                               : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F);
      };
      // cuBLASLt's A is our B, its B our A.
      GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode(p_.b_scale)));
      GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode(p_.a_scale)));
    }
    if (is_f8(c_t_.dtype)) GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(d_scale)));
    if (amax_) GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, amax_));
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t(fast_accum_ ? 1 : 0)));
    const cublasLtEpilogue_t epi = lt_epilogue(p_.has_bias, act_);
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(epi)));
    if (p_.has_bias) {
      const void* bias = bias_conv_.get() ? bias_conv_.get() : bias_;
      GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
      GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(lt_data_type(p_.bias_read))));
    }
    // Column-major view: X = B^T stored [N,K] (K x N, ld K, transposed), Y = A [M,K] (K x M, ld K), D N x M.
    auto lx = make_matrix_layout(lt_data_type(p_.b), uint64_t(K), uint64_t(N), K);
    if (!lx) return lx.error();
    auto ly = make_matrix_layout(lt_data_type(p_.a), uint64_t(K), uint64_t(M), K);
    if (!ly) return ly.error();
    auto lc = make_matrix_layout(lt_data_type(is_f8(c_t_.dtype) ? p_.c16 : c_t_.dtype), uint64_t(N), uint64_t(M), N);
    if (!lc) return lc.error();
    auto ld = make_matrix_layout(lt_data_type(c_t_.dtype), uint64_t(N), uint64_t(M), N);
    if (!ld) return ld.error();
    if (batch > 1) {
      // One strided batch: cuBLASLt's A (our B) shared with stride 0 where B is rank 2.
      const int32_t count = int32_t(batch);
      for (const MatrixLayout* l : {&*lx, &*ly, &*lc, &*ld})
        GEXEC_TRY(set_attribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
      GEXEC_TRY(set_attribute(*lx, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(s.b_batched ? N * K : 0)));
      GEXEC_TRY(set_attribute(*ly, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(M * K)));
      GEXEC_TRY(set_attribute(*lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(M * N)));
      GEXEC_TRY(set_attribute(*ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(M * N)));
    }
    auto pref = make_preference();
    if (!pref) return pref.error();
    GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kGemmWorkspaceBytes)));
    GEXEC_TRY(allow_compute_type_reductions_only(*pref));

    const LtCandidates::Answer ans = candidates_.query_heuristic(device_.cublaslt(), *desc, *lx, *ly, *lc, *ld, *pref);
    if (candidates_.empty())
      return runtime_error("op " + name_ + ": cuBLASLt has no FP8 algorithm for " + describe() + ": heuristic " +
                           cublasLtGetStatusName(ans.status) + ", " + std::to_string(ans.returned) + " results");
    desc_ = std::move(*desc);
    lx_ = std::move(*lx);
    ly_ = std::move(*ly);
    lc_ = std::move(*lc);
    ld_ = std::move(*ld);
    pref_ = std::move(*pref);
    signature_ = "fp8 " + describe() + " epilogue=" + std::to_string(int(epi));
    spdlog::debug("op {}: FP8 cuBLASLt plan {}, {} candidates", name_, signature_, candidates_.count());
    prepared_ = true;
    return {};
  }

  Status run() override {
    if (!prepared_) return runtime_error("op " + name_ + ": run() before prepare()");
    const GemmShape& s = p_.shape;
    const cudaStream_t stream = device_.stream();
    if (p_.pad) {
      if (!p_.a_once) GEXEC_TRY(pack_a(stream));
      if (!p_.b_once) GEXEC_TRY(pack_b(stream));
    } else {
      if (p_.transpose_a && !p_.a_once) GEXEC_TRY(launch_transpose_u8(a_, a_k_.get(), s.m, s.k, stream));
      if (p_.transpose_b && !p_.b_once) GEXEC_TRY(launch_transpose_u8(b_, b_k_.get(), s.n, s.k, stream));
    }
    if (bias_conv_.get() && !p_.bias_once) GEXEC_TRY(stage_bias(stream));
    if (p_.block) GEXEC_TRY(arrange_scales(stream, false));
    const void* x = p_.pad || p_.transpose_b ? b_k_.get() : b_;
    const void* y = p_.pad || p_.transpose_a ? a_k_.get() : a_;
    void* d = p_.d_padded ? d_pad_.get() : d_;
    const void* c = c16_.get() ? c16_.get() : d;  // never read: beta is 0
    const float beta = 0.0f;
    GEXEC_CUBLAS_TRY(cublasLtMatmul(device_.cublaslt(), desc_.get(), &alpha_, x, lx_.get(), y, ly_.get(), &beta, c,
                                    lc_.get(), d, ld_.get(), &candidates_.algo(), workspace_,
                                    kGemmWorkspaceBytes, stream));
    if (p_.d_padded) {
      // C's [M,N] rows out of D's [mp,np] ones, per batch entry.
      const size_t es = size_t(dtype_size(c_t_.dtype));
      for (int64_t z = 0; z < s.batch; ++z)
        GEXEC_CUDA_TRY(cudaMemcpy2DAsync(static_cast<char*>(d_) + size_t(z * s.m * s.n) * es, size_t(s.n) * es,
                                         static_cast<const char*>(d) + size_t(z * dim_m() * dim_n()) * es,
                                         size_t(dim_n()) * es, size_t(s.n) * es, size_t(s.m), cudaMemcpyDeviceToDevice,
                                         stream));
    }
    return {};
  }

  Tunable* tunable() override { return this; }
  std::string algo_description() const override { return variant_name(selected_variant()); }
  // Hopper's FP8 tensor cores keep the partial sums of each K block in fewer bits than f32,
  // with fast accumulation or without (the H200 put a 32x48x64 product with f32 output off by up
  // to 7e-4 relative, far beyond f32 accumulation; without fast accumulation the blocks are only
  // promoted to f32 more often); the GELU epilogue is cuBLASLt's approximate one, and split-K
  // rounds the product first, as for the f16/bf16 products (add_epilogue_precision, lt_algo.hpp).
  Precision precision() const override {
    Precision p = fp8_tensor_core_precision(fast_accum_);
    add_epilogue_precision(p, p_.has_bias || act_ != Act::none, act_ == Act::gelu, candidates_);
    return p;
  }

  // Tunable, over the heuristic's candidates: the first is used unless another is selected.
  int variant_count() const override { return candidates_.count(); }
  int selected_variant() const override { return candidates_.chosen(); }
  Status select_variant(int i) override {
    if (!candidates_.select(i)) return runtime_error("op " + name_ + ": no FP8 candidate " + std::to_string(i));
    return {};
  }
  std::string variant_name(int i) const override { return candidates_.name(i); }
  std::string signature() const override { return signature_; }
  // The operands move; what prepare() consumed (a constant's transposed copy, the converted bias)
  // and the bias and amax pointers, which are in the descriptor, stay.
  bool rebind(const Binding& b) override {
    if (amax_ || b.inputs.size() < 2 || b.outputs.empty()) return false;
    if (p_.block && !bind_block_scales(b)) return false;
    a_ = b.inputs[0];
    b_ = b.inputs[1];
    d_ = b.outputs[0];
    return true;
  }
  // move_operands stays the default (false): the algorithm was chosen for the old addresses'
  // alignment, a constant operand was transposed or converted from its old buffer, and the amax
  // pointer is in the descriptor; the executor builds this kernel again on caller buffers.
  std::string note() const override {
    std::string n;
    if (p_.pad && p_.mp == p_.shape.m && p_.np == p_.shape.n && p_.kp == p_.shape.k)
      n = "batched: A and B packed K-contiguous per batch entry";
    else if (p_.pad)
      n = "M, N, K padded to " + std::to_string(p_.mp) + "x" + std::to_string(p_.np) + "x" + std::to_string(p_.kp) +
          " (zero-filled copies of A and B, D copied out)";
    else if (p_.transpose_b)
      n = std::string("B copied transposed into [N,K] ") + (p_.b_once ? "once" : "every run");
    return n;
  }

 private:
  int64_t dim_m() const { return p_.pad ? p_.mp : p_.shape.m; }
  int64_t dim_n() const { return p_.pad ? p_.np : p_.shape.n; }
  int64_t dim_k() const { return p_.pad ? p_.kp : p_.shape.k; }
  Status pack_a(cudaStream_t stream) {
    return launch_pack_u8(a_, p_.transpose_a, p_.shape.m, p_.shape.k, a_k_.get(), dim_m(), dim_k(), p_.shape.batch,
                          p_.repeat_a_rows, stream);
  }
  Status pack_b(cudaStream_t stream) {
    return launch_pack_u8(b_, p_.transpose_b, p_.shape.n, p_.shape.k, b_k_.get(), dim_n(), dim_k(),
                          p_.shape.b_batched ? p_.shape.batch : 1, false, stream);
  }
  // The first N entries of the bias cuBLASLt reads: converted to its dtype, or copied.
  Status stage_bias(cudaStream_t stream) {
    if (p_.bias_in != p_.bias_read)
      return launch_convert(bias_, p_.bias_in, bias_conv_.get(), p_.bias_read, p_.shape.n, stream);
    GEXEC_CUDA_TRY(cudaMemcpyAsync(bias_conv_.get(), bias_, size_t(p_.shape.n) * size_t(dtype_size(p_.bias_in)),
                                   cudaMemcpyDeviceToDevice, stream));
    return {};
  }

  // S of A and B where the binding has them (scale_slot's places among its scales).
  bool bind_block_scales(const Binding& b) {
    if (a_slot_ < 0 || b_slot_ < 0 || b.scales.size() <= size_t(std::max(a_slot_, b_slot_))) return false;
    a_s_ = static_cast<const float*>(b.scales[size_t(a_slot_)]);
    b_s_ = static_cast<const float*>(b.scales[size_t(b_slot_)]);
    return true;
  }
  // Each S into the layout cuBLASLt reads: a constant one in prepare() (`once`), the others in
  // every run, after the ops that write them.
  Status arrange_scales(cudaStream_t stream, bool once) {
    if (!a_s_ || !b_s_) return runtime_error("op " + name_ + ": a block scale's S is not bound");
    auto one = [&](const ScaleArrangement& x, const float* s, float* out) -> Status {
      if (x.once != once) return {};
      return launch_arrange_scales(s, out, x.outer, x.ld, x.inner, x.so, x.si, stream);
    };
    GEXEC_TRY(one(p_.a_scale, a_s_, lt_b_scale_));
    GEXEC_TRY(one(p_.b_scale, b_s_, lt_a_scale_));
    return {};
  }

  std::string scale_mode() const {
    auto block = [](const ScaleArrangement& x) { return std::string(x.two_d ? "blk128x128" : "vec128"); };
    if (p_.block) return block(p_.a_scale) + "/" + block(p_.b_scale);
    return p_.outer_vector ? "outer_vec" : "scalar";
  }

  std::string describe() const {
    const GemmShape& s = p_.shape;
    return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
           (s.batch > 1 ? " batch=" + std::to_string(s.batch) + (s.b_batched ? "" : " shared_b") : "") +
           " a=" + std::string(dtype_name(p_.a)) + " b=" + std::string(dtype_name(p_.b)) +
           " d=" + std::string(dtype_name(c_t_.dtype)) +
           " bias=" + (p_.has_bias ? std::string(dtype_name(p_.bias_read)) : "none") +
           " scale=" + scale_mode() + " fast_accum=" + (fast_accum_ ? "1" : "0") +
           " amax=" + (amax_ ? "1" : "0") + (p_.pad ? " padded" : "");
  }

  CudaDevice& device_;
  std::string name_;
  Fp8Plan p_;
  float alpha_;
  bool fast_accum_;
  Act act_;
  const Tensor& a_t_;
  const Tensor& b_t_;
  const Tensor& c_t_;
  const void* a_ = nullptr;
  const void* b_ = nullptr;
  const void* bias_ = nullptr;
  void* d_ = nullptr;
  void* amax_ = nullptr;
  void* workspace_ = nullptr;
  int a_slot_ = -1, b_slot_ = -1;              // block scales: S of A and B among the binding's scales
  const float* a_s_ = nullptr;
  const float* b_s_ = nullptr;
  float* lt_a_scale_ = nullptr;                // in scales_: cuBLASLt's A (our B) and B (our A) scales
  float* lt_b_scale_ = nullptr;
  DeviceMemory a_k_, b_k_, scales_, c16_, bias_conv_, d_pad_;
  MatmulDesc desc_;
  MatrixLayout lx_, ly_, lc_, ld_;
  MatmulPreference pref_;
  LtCandidates candidates_;
  std::string signature_;
  bool prepared_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_fp8_gemm(CudaDevice& device, const Graph& g, const Op& op, const Binding& b,
                                              const KernelOptions&) {
  Fp8Plan plan = plan_fp8(g, op);
  if (!plan.rejected.empty()) return bad_input("op " + op.name + ": " + plan.rejected);
  if (b.inputs.size() != op.inputs.size() || b.outputs.size() != op.outputs.size())
    return bad_input("op " + op.name + ": the binding does not match the op's operands");
  std::unique_ptr<Kernel> k = std::make_unique<Fp8Gemm>(device, g, op, b, std::move(plan));
  return k;
}

}  // namespace gexec::cuda
