// The cuBLASLt GEMM kernel. Row-major products run through the column-major view (gemm_view.hpp);
// everything cuBLASLt needs is built once in prepare(), and run() only launches.
#include "cublaslt_gemm.hpp"

#include <spdlog/spdlog.h>

#include <cstdint>

#include "elementwise.hpp"
#include "lt_algo.hpp"
#include "lt_types.hpp"
#include "pad_copy.hpp"

namespace gexec::cuda {
namespace {

// How many of the heuristic's candidates are kept for --autotune (the first is the default).
constexpr int kHeuristicCandidates = 32;

cublasLtEpilogue_t epilogue_for(bool fuse, bool bias, Act act) {
  return fuse ? lt_epilogue(bias, act) : CUBLASLT_EPILOGUE_DEFAULT;
}

const char* epilogue_name(cublasLtEpilogue_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_BIAS: return "BIAS";
    case CUBLASLT_EPILOGUE_RELU: return "RELU";
    case CUBLASLT_EPILOGUE_RELU_BIAS: return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU: return "GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS: return "GELU_BIAS";
    default: return "DEFAULT";
  }
}

// The largest power of two (up to 256) dividing the address and, for a batch, the byte stride
// between entries: what every matrix of the operand is aligned to.
uint32_t alignment(const void* p, int64_t stride_elems, int elem_bytes) {
  const uint64_t addr = reinterpret_cast<uintptr_t>(p);
  const uint64_t stride = uint64_t(stride_elems) * uint64_t(elem_bytes);
  uint32_t al = 256;
  while (al > 1 && (addr % al != 0 || (stride != 0 && stride % al != 0))) al /= 2;
  return al;
}

}  // namespace

Result<std::unique_ptr<CublasLtGemm>> CublasLtGemm::create(CudaDevice& device, const KernelDef& def,
                                                           const Graph& g, const Op& op, const Binding& binding,
                                                           const KernelOptions& options) {
  if (op.type != OpType::MATMUL && op.type != OpType::GEMM_BIAS_ACT)
    return runtime_error("kernel " + def.name + " cannot run " + std::string(op_type_name(op.type)));
  std::string why;
  const auto shape = gemm_shape(g, op, &why);
  if (!shape) return bad_input(why);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != 1)
    return runtime_error("kernel " + def.name + " was bound to " + std::to_string(binding.inputs.size()) +
                         " inputs and " + std::to_string(binding.outputs.size()) + " outputs");
  std::unique_ptr<CublasLtGemm> k(new CublasLtGemm());
  k->device_ = &device;
  k->op_name_ = op.name;
  k->pad_policy_ = options.pad;
  k->shape_ = *shape;
  k->view_ = gemm_view(*shape);
  k->a_t_ = g.tensor(op.inputs[0]).dtype;
  k->b_t_ = g.tensor(op.inputs[1]).dtype;
  k->c_t_ = g.tensor(op.outputs[0]).dtype;
  k->bias_t_ = shape->has_bias ? g.tensor(op.inputs[2]).dtype : k->c_t_;
  k->act_ = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
  k->types_ = gemm_types(k->a_t_, k->b_t_, k->c_t_);
  k->types_.tf32_allowed = options.tf32;
  k->epi_ = gemm_epilogue(k->view_, k->types_, shape->has_bias, k->bias_t_, k->act_);
  k->a_ = binding.inputs[0];
  k->b_ = binding.inputs[1];
  k->bias_ = shape->has_bias ? binding.inputs[2] : nullptr;
  k->c_ = binding.outputs[0];
  k->a_ready_ = fixed_before_runs(g, op.inputs[0]);
  k->b_ready_ = fixed_before_runs(g, op.inputs[1]);
  k->bias_ready_ = shape->has_bias && fixed_before_runs(g, op.inputs[2]);
  if (shape->has_residual) {
    const Tensor& r = g.tensor(op.inputs.back());
    if (r.layout != g.tensor(op.outputs[0]).layout)
      return runtime_error("kernel " + def.name + " for op " + op.name + ": the residual \"" + r.name +
                           "\" must be stored like C, which cuBLASLt reads it as");
    k->res_ = binding.inputs.back();
    k->res_t_ = r.dtype;
    k->res_into_d_ = r.dtype != k->types_.d;
  }
  if (k->epi_.needs_tail)
    k->fallback_reason_ = "colmajor C: the bias runs along C's columns, which cuBLASLt's bias epilogue cannot "
                          "add there; a separate kernel adds it after the product";
  return k;
}

// A run may still be in flight on the stream: its scratch buffers must outlive it.
CublasLtGemm::~CublasLtGemm() {
  if (device_) (void)cudaStreamSynchronize(device_->stream());
}

std::string CublasLtGemm::describe() const {
  const GemmShape& s = shape_;
  return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
         " batch=" + std::to_string(s.batch) + ", A " + std::string(dtype_name(a_t_)) + " B " +
         std::string(dtype_name(b_t_)) + " C " + std::string(dtype_name(c_t_)) + "; cuBLASLt reads " +
         std::string(dtype_name(types_.ab)) + ", writes " + std::string(dtype_name(types_.d)) + ", D is " +
         std::to_string(view_.m) + "x" + std::to_string(view_.n) + " ld " + std::to_string(view_.ld_d) +
         (view_.batch > 1 ? " x" + std::to_string(view_.batch) : "") + ", op(X) " + (view_.x.trans ? "T" : "N") +
         " op(Y) " + (view_.y.trans ? "T" : "N");
}

Precision CublasLtGemm::precision() const {
  Precision p;
  p.tf32 = types_.tf32();
  const bool epilogue_work = shape_.has_bias || act_ != Act::none;
  if (!fused_ && epilogue_work) p.product_rounded = true;
  // Batched, with a bias and a residual, the fused epilogue's results on the H200 lay 3 ulps from
  // the reference (gexec_graphgen --backend cuda, f16 and bf16): as if D were rounded to its dtype
  // before the bias. Declared so, the bound counts those roundings.
  if (fused_ && shape_.batch > 1 && shape_.has_bias && shape_.has_residual) p.product_rounded = true;
  if (fused_ && act_ == Act::gelu) {
    p.gelu_tanh_rel = kCublasLtGeluTanhRel;
    p.product_rounded = true;
  }
  if (epilogue_work && chosen_ >= 0 && chosen_ < variant_count() && splits_k(candidates_[size_t(chosen_)].algo))
    p.product_rounded = true;
  return p;
}

Status CublasLtGemm::build(bool fuse, bool* refused) {
  *refused = false;
  const int ab_bytes = dtype_size(types_.ab), d_bytes = dtype_size(types_.d);
  const auto [x, y, d] = operands();

  // f16 and bf16 accumulate in f32; f32 inputs use TF32 tensor cores (the op asks for no more).
  const cublasComputeType_t compute = types_.tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  auto desc = make_matmul_desc(compute, CUDA_R_32F);
  if (!desc) return desc.error();
  const int32_t trans_x = view_.x.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t trans_y = view_.y.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, trans_x));
  GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSB, trans_y));
  const cublasLtEpilogue_t epi = epilogue_for(fuse, shape_.has_bias, act_);
  GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(epi)));
  if (fuse && shape_.has_bias) {
    // The bias data type is left at its default, D's dtype: the bias was converted to it if needed,
    // and copied into a zero-padded buffer as long as D's padded rows where the product is padded.
    // The heuristic reads the pointer's alignment, so it is set before the query.
    const void* bias = bias_pad_.get() ? bias_pad_.get() : epi_.convert_bias ? bias_conv_.get() : bias_;
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
  }

  // When padding, every operand is described by pad_'s geometry (which equals the stored one for
  // an operand that needs no padding); otherwise by the view.
  const PaddedOperand& px = pad_.x;
  const PaddedOperand& py = pad_.y;
  auto lx = pad_.pad ? make_matrix_layout(lt_data_type(types_.ab), uint64_t(px.rows), uint64_t(px.cols), px.ld)
                     : make_matrix_layout(lt_data_type(types_.ab), uint64_t(view_.x.rows), uint64_t(view_.x.cols), view_.x.ld);
  if (!lx) return lx.error();
  auto ly = pad_.pad ? make_matrix_layout(lt_data_type(types_.ab), uint64_t(py.rows), uint64_t(py.cols), py.ld)
                     : make_matrix_layout(lt_data_type(types_.ab), uint64_t(view_.y.rows), uint64_t(view_.y.cols), view_.y.ld);
  if (!ly) return ly.error();
  auto ld = pad_.pad ? make_matrix_layout(lt_data_type(types_.d), uint64_t(pad_.m), uint64_t(pad_.n), pad_.d.ld)
                     : make_matrix_layout(lt_data_type(types_.d), uint64_t(view_.m), uint64_t(view_.n), view_.ld_d);
  if (!ld) return ld.error();
  if (view_.batch > 1) {
    const int32_t count = int32_t(view_.batch);
    GEXEC_TRY(set_attribute(*lx, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
    GEXEC_TRY(set_attribute(*lx, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(view_.x.stride)));
    GEXEC_TRY(set_attribute(*ly, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
    GEXEC_TRY(set_attribute(*ly, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(view_.y.stride)));
    GEXEC_TRY(set_attribute(*ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
    GEXEC_TRY(set_attribute(*ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(view_.stride_d)));
  }

  auto pref = make_preference();
  if (!pref) return pref.error();
  GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(kGemmWorkspaceBytes)));
  GEXEC_TRY(allow_compute_type_reductions_only(*pref));
  // The actual alignments, so that no algorithm assumes more than the buffers give.
  GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(x, view_.x.stride, ab_bytes)));
  GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(y, view_.y.stride, ab_bytes)));
  const void* c = res_ && !res_into_d_ ? res_ : d;
  GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(c, view_.stride_d, d_bytes)));
  GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(d, view_.stride_d, d_bytes)));

  std::vector<cublasLtMatmulHeuristicResult_t> results(kHeuristicCandidates);
  int returned = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(device_->cublaslt(), desc->get(), lx->get(), ly->get(), ld->get(), ld->get(),
                                     pref->get(), kHeuristicCandidates, results.data(), &returned);
  if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
    return cublas_error(st, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__).with(describe());
  std::vector<cublasLtMatmulHeuristicResult_t> usable;
  if (st == CUBLAS_STATUS_SUCCESS)
    for (int i = 0; i < returned && i < kHeuristicCandidates; ++i)
      if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS && results[size_t(i)].workspaceSize <= kGemmWorkspaceBytes)
        usable.push_back(results[size_t(i)]);
  if (fuse && epi != CUBLASLT_EPILOGUE_DEFAULT && fault::refuse_epilogue()) usable.clear();  // tests: fault.hpp
  if (usable.empty()) {
    if (fuse && epi != CUBLASLT_EPILOGUE_DEFAULT) {
      *refused = true;
      fallback_reason_ = std::string("cuBLASLt has no algorithm for the ") + epilogue_name(epi) +
                         " epilogue here (" + describe() + "); a separate kernel adds the bias and activation " +
                         "after the plain product";
      return {};
    }
    return runtime_error(std::string("cuBLASLt has no algorithm for this product (") + describe() + ", epilogue " +
                         epilogue_name(epi) + "): heuristic " + cublasLtGetStatusName(st) + ", " +
                         std::to_string(returned) + " results");
  }
  desc_ = std::move(*desc);
  layout_x_ = std::move(*lx);
  layout_y_ = std::move(*ly);
  layout_d_ = std::move(*ld);
  pref_ = std::move(*pref);
  candidates_ = std::move(usable);
  chosen_ = 0;
  fused_ = fuse && epi != CUBLASLT_EPILOGUE_DEFAULT;
  // Everything that changes the heuristic's answer: the tuning cache's key.
  signature_ = "m=" + std::to_string(view_.m) + " n=" + std::to_string(view_.n) + " k=" + std::to_string(view_.k) +
               " batch=" + std::to_string(view_.batch) + " ab=" + std::string(dtype_name(types_.ab)) +
               " d=" + std::string(dtype_name(types_.d)) + " op=" + (view_.x.trans ? "T" : "N") +
               (view_.y.trans ? "T" : "N") + " ld=" + std::to_string(view_.x.ld) + "," + std::to_string(view_.y.ld) +
               "," + std::to_string(view_.ld_d) + " epilogue=" + epilogue_name(epi) +
               " align=" + std::to_string(alignment(x, view_.x.stride, ab_bytes)) + "," +
               std::to_string(alignment(y, view_.y.stride, ab_bytes)) + "," +
               std::to_string(alignment(d, view_.stride_d, d_bytes)) + " pad=" + (pad_.pad ? "1" : "0") +
               (res_ ? " residual=1" : "");
  if (spdlog::should_log(spdlog::level::debug))
    for (size_t i = 0; i < candidates_.size(); ++i)
      spdlog::debug("op {}: cuBLASLt candidate {}{}: {}, workspace {} bytes, {:.2f} waves", op_name_, i,
                    i == 0 ? " (chosen)" : "", variant_name(int(i)), candidates_[i].workspaceSize,
                    double(candidates_[i].wavesCount));
  return {};
}

std::string CublasLtGemm::variant_name(int i) const {
  if (i < 0 || i >= variant_count()) return "none";
  const cublasLtMatmulAlgo_t& algo = candidates_[size_t(i)].algo;
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

CublasLtGemm::Operands CublasLtGemm::operands() const {
  const void* a = types_.convert_a ? a_conv_.get() : a_;
  const void* b = types_.convert_b ? b_conv_.get() : b_;
  Operands o;
  o.x = pad_.pad && pad_.x.padded ? x_pad_.get() : view_.x.is_b ? b : a;
  o.y = pad_.pad && pad_.y.padded ? y_pad_.get() : view_.y.is_b ? b : a;
  o.d = pad_.pad && pad_.d.padded ? d_pad_.get() : types_.convert_out ? d_scratch_.get() : c_;
  return o;
}

Status CublasLtGemm::pad_operands(bool fixed) const {
  if (!pad_.pad) return {};
  // Padding implies no conversions (plan_padding), so the sources are the stored operands.
  auto one = [&](const ColOperand& o, const PaddedOperand& p, const DeviceMemory& buf) -> Status {
    if (!p.padded || (o.is_b ? b_ready_ : a_ready_) != fixed) return {};
    return launch_pad_copy(buf.get(), p.ld, o.is_b ? b_ : a_, p.rows0, p.rows0, p.cols0, dtype_size(types_.ab),
                           device_->stream());
  };
  GEXEC_TRY(one(view_.x, pad_.x, x_pad_));
  return one(view_.y, pad_.y, y_pad_);
}

Status CublasLtGemm::prepare() {
  if (prepared_) return {};
  const GemmShape& s = shape_;
  const int64_t a_n = s.batch * s.m * s.k;
  const int64_t b_n = (s.b_batched ? s.batch : 1) * s.k * s.n;
  const int64_t c_n = s.batch * s.m * s.n;
  const cudaStream_t stream = device_->stream();

  auto ws = device_->gemm_workspace();
  if (!ws) return ws.error();
  workspace_ = *ws;

  auto scratch = [](DeviceMemory& m, int64_t elems, DType t) -> Status {
    auto r = DeviceMemory::allocate(size_t(elems) * size_t(dtype_size(t)));
    if (!r) return r.error().with("allocating a scratch buffer");
    m = std::move(*r);
    return {};
  };
  if (types_.convert_a) {
    GEXEC_TRY(scratch(a_conv_, a_n, types_.ab));
    if (a_ready_) GEXEC_TRY(launch_convert(a_, a_t_, a_conv_.get(), types_.ab, a_n, stream));
  }
  if (types_.convert_b) {
    GEXEC_TRY(scratch(b_conv_, b_n, types_.ab));
    if (b_ready_) GEXEC_TRY(launch_convert(b_, b_t_, b_conv_.get(), types_.ab, b_n, stream));
  }
  if (types_.convert_out) GEXEC_TRY(scratch(d_scratch_, c_n, types_.d));
  if (epi_.convert_bias) GEXEC_TRY(scratch(bias_conv_, s.n, types_.d));

  pad_ = plan_padding(view_, types_, epi_, a_ready_, b_ready_, pad_policy_);
  if (pad_.pad && res_) {
    // C would need a padded copy of R in every run: the copy costs what padding wins.
    pad_.pad = false;
    pad_.why = "misaligned rows, not padded (a residual read as C is not padded)";
  }
  if (pad_.pad) {
    spdlog::debug("op {}: {}", op_name_, pad_.why);
    // Zeroed once: the padding of K must add nothing, and the copies only ever write the valid block.
    auto padded = [&](DeviceMemory& m, const PaddedOperand& p, DType t) -> Status {
      if (!p.padded) return {};
      GEXEC_TRY(scratch(m, p.elems(), t));
      GEXEC_CUDA_TRY(cudaMemsetAsync(m.get(), 0, size_t(p.elems()) * size_t(dtype_size(t)), stream));
      return {};
    };
    GEXEC_TRY(padded(x_pad_, pad_.x, types_.ab));
    GEXEC_TRY(padded(y_pad_, pad_.y, types_.ab));
    GEXEC_TRY(padded(d_pad_, pad_.d, types_.d));
    if (s.has_bias && pad_.m != view_.m) {
      PaddedOperand b;
      b.padded = true;
      b.rows = b.ld = pad_.m;
      b.cols = 1;
      GEXEC_TRY(padded(bias_pad_, b, types_.d));
    }
    GEXEC_TRY(pad_operands(/*fixed=*/true));
  }

  bool refused = false;
  GEXEC_TRY(build(epi_.fused, &refused));
  if (refused) {
    GEXEC_TRY(build(false, &refused));
    epi_.needs_tail = true;
    epi_.convert_bias = false;
  }
  if (!fused_) bias_pad_ = DeviceMemory();  // the separate bias kernel reads the bias itself
  if (fused_ && bias_ready_) GEXEC_TRY(refresh_bias());
  prepared_ = true;
  return {};
}

// The bias the epilogue reads: converted to D's dtype and/or copied into its padded buffer, where
// either is needed. Once in prepare() for a bias fixed before the runs, else in every run.
Status CublasLtGemm::refresh_bias() {
  if (!shape_.has_bias) return {};
  const cudaStream_t stream = device_->stream();
  void* target = bias_pad_.get() ? bias_pad_.get() : epi_.convert_bias ? bias_conv_.get() : nullptr;
  if (!target) return {};
  if (epi_.convert_bias) return launch_convert(bias_, bias_t_, target, types_.d, shape_.n, stream);
  GEXEC_CUDA_TRY(cudaMemcpyAsync(target, bias_, size_t(shape_.n) * size_t(dtype_size(types_.d)),
                                 cudaMemcpyDeviceToDevice, stream));
  return {};
}

bool CublasLtGemm::rebind(const Binding& b) {
  if (b.inputs.size() < 2 || b.outputs.size() != 1) return false;
  a_ = b.inputs[0];
  b_ = b.inputs[1];
  c_ = b.outputs[0];
  if (res_) res_ = b.inputs.back();
  return true;
}

bool CublasLtGemm::move_operands(const Binding& b) {
  const bool bias = shape_.has_bias;
  if (!prepared_ || b.inputs.size() < (bias ? 3u : 2u) || b.outputs.size() != 1) return false;
  // The algorithm was chosen for the old addresses' alignment (the strides do not change).
  auto fits = [](const void* now, const void* was, bool fixed) {
    if (now == was) return true;
    return !fixed && alignment(now, 0, 1) >= alignment(was, 0, 1);
  };
  if (!fits(b.inputs[0], a_, a_ready_) || !fits(b.inputs[1], b_, b_ready_) || !fits(b.outputs[0], c_, false) ||
      (bias && !fits(b.inputs[2], bias_, bias_ready_)) || (res_ && !fits(b.inputs.back(), res_, false)))
    return false;
  if (bias && b.inputs[2] != bias_ && fused_ && !bias_pad_.get() && !epi_.convert_bias) {
    // The epilogue reads the bias itself: its address is in the descriptor.
    if (!set_attribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, b.inputs[2])) return false;
  }
  a_ = b.inputs[0];
  b_ = b.inputs[1];
  if (bias) bias_ = b.inputs[2];
  if (res_) res_ = b.inputs.back();  // read each run, as C or converted into D
  c_ = b.outputs[0];
  return true;
}

Status CublasLtGemm::select_variant(int i) {
  if (i < 0 || i >= variant_count())
    return runtime_error("op " + op_name_ + ": no cuBLASLt candidate " + std::to_string(i) + " (there are " +
                         std::to_string(variant_count()) + ")");
  chosen_ = i;
  return {};
}

Status CublasLtGemm::run() {
  if (!prepared_) return runtime_error("op " + op_name_ + ": run() before prepare()");
  const GemmShape& s = shape_;
  const cudaStream_t stream = device_->stream();
  if (types_.convert_a && !a_ready_)
    GEXEC_TRY(launch_convert(a_, a_t_, a_conv_.get(), types_.ab, s.batch * s.m * s.k, stream));
  if (types_.convert_b && !b_ready_)
    GEXEC_TRY(launch_convert(b_, b_t_, b_conv_.get(), types_.ab, (s.b_batched ? s.batch : 1) * s.k * s.n, stream));
  if (fused_ && !bias_ready_) GEXEC_TRY(refresh_bias());
  GEXEC_TRY(pad_operands(/*fixed=*/false));

  auto [x, y, d] = operands();
  const float alpha = float(s.alpha), beta = res_ ? float(s.beta) : 0.0f;
  // Without a residual beta is 0 and C is not read: D is passed for it, with D's layout. With
  // one, C is R (stored like C, so D's layout describes it), or D holding R converted to D's dtype.
  const void* c = d;
  if (res_ && res_into_d_) GEXEC_TRY(launch_convert(res_, res_t_, d, types_.d, s.batch * s.m * s.n, stream));
  else if (res_) c = res_;
  GEXEC_CUBLAS_TRY(cublasLtMatmul(device_->cublaslt(), desc_.get(), &alpha, x, layout_x_.get(), y, layout_y_.get(),
                                  &beta, c, layout_d_.get(), d, layout_d_.get(), &candidates_[size_t(chosen_)].algo,
                                  workspace_, kGemmWorkspaceBytes, stream));
  if (pad_.pad && pad_.d.padded) {
    // The valid m x n block of the padded D goes to C, which the bias kernel below (if the
    // epilogue was refused) then works on: padding implies no output conversion.
    GEXEC_TRY(launch_pad_copy(c_, view_.ld_d, d, pad_.d.ld, view_.m, view_.n, dtype_size(types_.d), stream));
    d = c_;
  }
  if (epi_.needs_tail)
    GEXEC_TRY(launch_bias_act(d, types_.d, s.batch, s.m, s.n, s.layout_c, s.has_bias ? bias_ : nullptr, bias_t_,
                              act_, stream));
  if (types_.convert_out) GEXEC_TRY(launch_convert(d, types_.d, c_, c_t_, s.batch * s.m * s.n, stream));
  return {};
}

Result<std::unique_ptr<Kernel>> make_cublaslt_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                   const Op& op, const Binding& binding, const KernelOptions& options) {
  auto k = CublasLtGemm::create(device, def, g, op, binding, options);
  if (!k) return k.error();
  return std::unique_ptr<Kernel>(std::move(*k));
}

}  // namespace gexec::cuda
