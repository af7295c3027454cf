// The cuBLASLt GEMM kernel. Row-major products run through the column-major view (gemm_view.hpp);
// everything cuBLASLt needs is built once in prepare(), and run() only launches.
#include "cublaslt_gemm.hpp"

#include <spdlog/spdlog.h>

#include <cstdint>

#include "elementwise.hpp"
#include "lt_algo.hpp"
#include "lt_algo_space.hpp"
#include "lt_types.hpp"
#include "pad_copy.hpp"

namespace gexec::cuda {
namespace {

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
  GemmPlan plan = plan_gemm(g, op, options);
  if (!plan.shaped) return bad_input(plan.rejected);
  if (binding.inputs.size() != op.inputs.size() || binding.outputs.size() != 1)
    return runtime_error("kernel " + def.name + " was bound to " + std::to_string(binding.inputs.size()) +
                         " inputs and " + std::to_string(binding.outputs.size()) + " outputs");
  if (!plan.rejected.empty())
    return runtime_error("kernel " + def.name + " for op " + op.name + ": " + plan.rejected);
  std::unique_ptr<CublasLtGemm> k(new CublasLtGemm());
  k->device_ = &device;
  k->op_name_ = op.name;
  k->plan_ = std::move(plan);
  k->algo_space_all_ = options.algo_space_all;
  k->epi_ = k->plan_.epi;
  k->a_ = binding.inputs[0];
  k->b_ = binding.inputs[1];
  k->bias_ = k->plan_.shape.has_bias ? binding.inputs[2] : nullptr;
  k->c_ = binding.outputs[0];
  if (k->plan_.residual) k->res_ = binding.inputs.back();
  if (k->epi_.needs_tail) k->fallback_reason_ = tail_reason(k->plan_.act, k->plan_.shape.has_bias);
  return k;
}

// A run may still be in flight on the stream: its scratch buffers must outlive it.
CublasLtGemm::~CublasLtGemm() {
  if (device_) (void)cudaStreamSynchronize(device_->stream());
}

std::string CublasLtGemm::describe() const {
  const GemmView& view = plan_.view;
  const GemmTypes& types = plan_.types;
  const GemmShape& s = plan_.shape;
  return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
         " batch=" + std::to_string(s.batch) + ", A " + std::string(dtype_name(plan_.a)) + " B " +
         std::string(dtype_name(plan_.b)) + " C " + std::string(dtype_name(plan_.c)) + "; cuBLASLt reads " +
         std::string(dtype_name(types.ab)) + ", writes " + std::string(dtype_name(types.d)) + ", D is " +
         std::to_string(view.m) + "x" + std::to_string(view.n) + " ld " + std::to_string(view.ld_d) +
         (view.batch > 1 ? " x" + std::to_string(view.batch) : "") + ", op(X) " + (view.x.trans ? "T" : "N") +
         " op(Y) " + (view.y.trans ? "T" : "N");
}

Precision CublasLtGemm::precision() const {
  Precision p;
  p.tf32 = plan_.types.tf32();
  const bool epilogue_work = plan_.shape.has_bias || plan_.act != Act::none;
  if (!fused_ && epilogue_work) p.product_rounded = true;
  // Batched, with a bias and a residual, the fused epilogue's results on the H200 lay 3 ulps from
  // the reference (gexec_graphgen --backend cuda, f16 and bf16): as if D were rounded to its dtype
  // before the bias. Declared so, the bound counts those roundings.
  const GemmShape& s = plan_.shape;
  if (fused_ && s.batch > 1 && s.has_bias && s.has_residual) p.product_rounded = true;
  add_epilogue_precision(p, epilogue_work, fused_ && plan_.act == Act::gelu, candidates_);
  return p;
}

Status CublasLtGemm::build(bool fuse, bool* refused) {
  const GemmView& view = plan_.view;
  const GemmTypes& types = plan_.types;
  const PadPlan& pad = plan_.pad;
  *refused = false;
  const int ab_bytes = dtype_size(types.ab), d_bytes = dtype_size(types.d);
  const auto [x, y, d] = operands();

  // f16 and bf16 accumulate in f32; f32 inputs use TF32 tensor cores (the op asks for no more).
  const cublasComputeType_t compute = types.tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  auto desc = make_matmul_desc(compute, CUDA_R_32F);
  if (!desc) return desc.error();
  const int32_t trans_x = view.x.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t trans_y = view.y.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, trans_x));
  GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_TRANSB, trans_y));
  const cublasLtEpilogue_t epi = epilogue_for(fuse, plan_.shape.has_bias, plan_.act);
  GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(epi)));
  if (fuse && plan_.shape.has_bias) {
    // The bias data type is left at its default, D's dtype: the bias was converted to it if needed,
    // and copied into a zero-padded buffer as long as D's padded rows where the product is padded.
    // The heuristic reads the pointer's alignment, so it is set before the query.
    const void* bias = bias_pad_.get() ? bias_pad_.get() : epi_.convert_bias ? bias_conv_.get() : bias_;
    GEXEC_TRY(set_attribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
  }

  // When padding, every operand is described by pad's geometry (which equals the stored one for
  // an operand that needs no padding); otherwise by the view.
  const PaddedOperand& px = pad.x;
  const PaddedOperand& py = pad.y;
  auto lx = pad.pad ? make_matrix_layout(lt_data_type(types.ab), uint64_t(px.rows), uint64_t(px.cols), px.ld)
                    : make_matrix_layout(lt_data_type(types.ab), uint64_t(view.x.rows), uint64_t(view.x.cols), view.x.ld);
  if (!lx) return lx.error();
  auto ly = pad.pad ? make_matrix_layout(lt_data_type(types.ab), uint64_t(py.rows), uint64_t(py.cols), py.ld)
                    : make_matrix_layout(lt_data_type(types.ab), uint64_t(view.y.rows), uint64_t(view.y.cols), view.y.ld);
  if (!ly) return ly.error();
  auto ld = pad.pad ? make_matrix_layout(lt_data_type(types.d), uint64_t(pad.m), uint64_t(pad.n), pad.d.ld)
                    : make_matrix_layout(lt_data_type(types.d), uint64_t(view.m), uint64_t(view.n), view.ld_d);
  if (!ld) return ld.error();
  if (view.batch > 1) {
    const int32_t count = int32_t(view.batch);
    GEXEC_TRY(set_attribute(*lx, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
    GEXEC_TRY(set_attribute(*lx, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(view.x.stride)));
    GEXEC_TRY(set_attribute(*ly, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
    GEXEC_TRY(set_attribute(*ly, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(view.y.stride)));
    GEXEC_TRY(set_attribute(*ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count));
    GEXEC_TRY(set_attribute(*ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(view.stride_d)));
  }

  const void* c = res_ && !plan_.res_into_d ? res_ : d;
  auto preference = [&](uint64_t workspace) -> Result<MatmulPreference> {
    auto pref = make_preference();
    if (!pref) return pref.error();
    GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace));
    GEXEC_TRY(allow_compute_type_reductions_only(*pref));
    // The actual alignments, so that no algorithm assumes more than the buffers give.
    GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(x, view.x.stride, ab_bytes)));
    GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(y, view.y.stride, ab_bytes)));
    GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(c, view.stride_d, d_bytes)));
    GEXEC_TRY(set_attribute(*pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(d, view.stride_d, d_bytes)));
    return pref;
  };
  auto pref = preference(kGemmWorkspaceBytes);
  if (!pref) return pref.error();

  LtCandidates usable;
  const LtCandidates::Answer ans = usable.query_heuristic(device_->cublaslt(), *desc, *lx, *ly, *ld, *ld, *pref);
  const cublasStatus_t st = ans.status;
  if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
    return cublas_error(st, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__).with(describe());
  if (small_workspace_default(compute, lt_data_type(types.ab))) {
    // The default: the heuristic's first answer within kDefaultChoiceWorkspace (lt_algo.hpp says
    // why), ahead of its answers within the whole workspace, which --autotune times.
    auto small = preference(kDefaultChoiceWorkspace);
    if (!small) return small.error();
    LtCandidates first;
    const auto got = first.query_heuristic(device_->cublaslt(), *desc, *lx, *ly, *ld, *ld, *small, 1);
    if (got.status == CUBLAS_STATUS_SUCCESS && !first.empty()) usable.make_first(first.at(0));
  }
  if (algo_space_all_ && st == CUBLAS_STATUS_SUCCESS) {  // --algo-space all: the default stays first
    AlgoSpaceTypes at;
    at.compute = compute;
    at.a = at.b = lt_data_type(types.ab);
    at.c = at.d = lt_data_type(types.d);
    const int added = add_algo_space(device_->cublaslt(), at, *desc, *lx, *ly, *ld, *ld, usable);
    spdlog::debug("op {}: --algo-space all added {} cuBLASLt configurations to the heuristic's {}", op_name_, added,
                  ans.returned);
  }
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
                         std::to_string(ans.returned) + " results");
  }
  desc_ = std::move(*desc);
  layout_x_ = std::move(*lx);
  layout_y_ = std::move(*ly);
  layout_d_ = std::move(*ld);
  pref_ = std::move(*pref);
  candidates_ = std::move(usable);
  fused_ = fuse && epi != CUBLASLT_EPILOGUE_DEFAULT;
  // Everything that changes the heuristic's answer: the tuning cache's key.
  signature_ = "m=" + std::to_string(view.m) + " n=" + std::to_string(view.n) + " k=" + std::to_string(view.k) +
               " batch=" + std::to_string(view.batch) + " ab=" + std::string(dtype_name(types.ab)) +
               " d=" + std::string(dtype_name(types.d)) + " op=" + (view.x.trans ? "T" : "N") +
               (view.y.trans ? "T" : "N") + " ld=" + std::to_string(view.x.ld) + "," + std::to_string(view.y.ld) +
               "," + std::to_string(view.ld_d) + " epilogue=" + epilogue_name(epi) +
               " align=" + std::to_string(alignment(x, view.x.stride, ab_bytes)) + "," +
               std::to_string(alignment(y, view.y.stride, ab_bytes)) + "," +
               std::to_string(alignment(d, view.stride_d, d_bytes)) + " pad=" + (pad.pad ? "1" : "0") +
               (res_ ? " residual=1" : "");
  if (spdlog::should_log(spdlog::level::debug))
    for (int i = 0; i < candidates_.count(); ++i)
      spdlog::debug("op {}: cuBLASLt candidate {}{}: {}, workspace {} bytes, {:.2f} waves", op_name_, i,
                    i == 0 ? " (chosen)" : "", variant_name(i), candidates_.at(i).workspaceSize,
                    double(candidates_.at(i).wavesCount));
  return {};
}

CublasLtGemm::Operands CublasLtGemm::operands() const {
  const void* a = plan_.types.convert_a ? a_conv_.get() : a_;
  const void* b = plan_.types.convert_b ? b_conv_.get() : b_;
  Operands o;
  o.x = plan_.pad.pad && plan_.pad.x.padded ? x_pad_.get() : plan_.view.x.is_b ? b : a;
  o.y = plan_.pad.pad && plan_.pad.y.padded ? y_pad_.get() : plan_.view.y.is_b ? b : a;
  o.d = plan_.pad.pad && plan_.pad.d.padded ? d_pad_.get() : plan_.types.convert_out ? d_scratch_.get() : c_;
  return o;
}

Status CublasLtGemm::pad_operands(bool fixed) const {
  if (!plan_.pad.pad) return {};
  // Padding implies no conversions (plan_padding), so the sources are the stored operands.
  auto one = [&](const ColOperand& o, const PaddedOperand& p, const DeviceMemory& buf) -> Status {
    if (!p.padded || (o.is_b ? plan_.b_once : plan_.a_once) != fixed) return {};
    return launch_pad_copy(buf.get(), p.ld, o.is_b ? b_ : a_, p.rows0, p.rows0, p.cols0, dtype_size(plan_.types.ab),
                           device_->stream());
  };
  GEXEC_TRY(one(plan_.view.x, plan_.pad.x, x_pad_));
  return one(plan_.view.y, plan_.pad.y, y_pad_);
}

Status CublasLtGemm::prepare() {
  const GemmView& view = plan_.view;
  const GemmTypes& types = plan_.types;
  const PadPlan& pad = plan_.pad;
  if (prepared_) return {};
  const GemmShape& s = plan_.shape;
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
  if (types.convert_a) {
    GEXEC_TRY(scratch(a_conv_, a_n, types.ab));
    if (plan_.a_once) GEXEC_TRY(launch_convert(a_, plan_.a, a_conv_.get(), types.ab, a_n, stream));
  }
  if (types.convert_b) {
    GEXEC_TRY(scratch(b_conv_, b_n, types.ab));
    if (plan_.b_once) GEXEC_TRY(launch_convert(b_, plan_.b, b_conv_.get(), types.ab, b_n, stream));
  }
  if (types.convert_out) GEXEC_TRY(scratch(d_scratch_, c_n, types.d));
  if (epi_.convert_bias) GEXEC_TRY(scratch(bias_conv_, s.n, types.d));

  // Whether to pad was planned with the op (plan_gemm: a residual read as C is not padded).
  if (pad.pad) {
    spdlog::debug("op {}: {}", op_name_, pad.why);
    // Zeroed once: the padding of K must add nothing, and the copies only ever write the valid block.
    auto padded = [&](DeviceMemory& m, const PaddedOperand& p, DType t) -> Status {
      if (!p.padded) return {};
      GEXEC_TRY(scratch(m, p.elems(), t));
      GEXEC_CUDA_TRY(cudaMemsetAsync(m.get(), 0, size_t(p.elems()) * size_t(dtype_size(t)), stream));
      return {};
    };
    GEXEC_TRY(padded(x_pad_, pad.x, types.ab));
    GEXEC_TRY(padded(y_pad_, pad.y, types.ab));
    GEXEC_TRY(padded(d_pad_, pad.d, types.d));
    if (s.has_bias && pad.m != view.m) {
      PaddedOperand b;
      b.padded = true;
      b.rows = b.ld = pad.m;
      b.cols = 1;
      GEXEC_TRY(padded(bias_pad_, b, types.d));
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
  if (fused_ && plan_.bias_once) GEXEC_TRY(refresh_bias());
  prepared_ = true;
  return {};
}

// The bias the epilogue reads: converted to D's dtype and/or copied into its padded buffer, where
// either is needed. Once in prepare() for a bias fixed before the runs, else in every run.
Status CublasLtGemm::refresh_bias() {
  if (!plan_.shape.has_bias) return {};
  const cudaStream_t stream = device_->stream();
  void* target = bias_pad_.get() ? bias_pad_.get() : epi_.convert_bias ? bias_conv_.get() : nullptr;
  if (!target) return {};
  if (epi_.convert_bias) return launch_convert(bias_, plan_.bias, target, plan_.types.d, plan_.shape.n, stream);
  GEXEC_CUDA_TRY(cudaMemcpyAsync(target, bias_, size_t(plan_.shape.n) * size_t(dtype_size(plan_.types.d)),
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
  const bool bias = plan_.shape.has_bias;
  if (!prepared_ || b.inputs.size() < (bias ? 3u : 2u) || b.outputs.size() != 1) return false;
  // The algorithm was chosen for the old addresses' alignment (the strides do not change).
  auto fits = [](const void* now, const void* was, bool fixed) {
    if (now == was) return true;
    return !fixed && alignment(now, 0, 1) >= alignment(was, 0, 1);
  };
  if (!fits(b.inputs[0], a_, plan_.a_once) || !fits(b.inputs[1], b_, plan_.b_once) || !fits(b.outputs[0], c_, false) ||
      (bias && !fits(b.inputs[2], bias_, plan_.bias_once)) || (res_ && !fits(b.inputs.back(), res_, false)))
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
  if (!candidates_.select(i))
    return runtime_error("op " + op_name_ + ": no cuBLASLt candidate " + std::to_string(i) + " (there are " +
                         std::to_string(variant_count()) + ")");
  return {};
}

Status CublasLtGemm::run() {
  const GemmView& view = plan_.view;
  const GemmTypes& types = plan_.types;
  const PadPlan& pad = plan_.pad;
  if (!prepared_) return runtime_error("op " + op_name_ + ": run() before prepare()");
  const GemmShape& s = plan_.shape;
  const cudaStream_t stream = device_->stream();
  if (types.convert_a && !plan_.a_once)
    GEXEC_TRY(launch_convert(a_, plan_.a, a_conv_.get(), types.ab, s.batch * s.m * s.k, stream));
  if (types.convert_b && !plan_.b_once)
    GEXEC_TRY(launch_convert(b_, plan_.b, b_conv_.get(), types.ab, (s.b_batched ? s.batch : 1) * s.k * s.n, stream));
  if (fused_ && !plan_.bias_once) GEXEC_TRY(refresh_bias());
  GEXEC_TRY(pad_operands(/*fixed=*/false));

  auto [x, y, d] = operands();
  const float alpha = float(s.alpha), beta = res_ ? float(s.beta) : 0.0f;
  // Without a residual beta is 0 and C is not read: D is passed for it, with D's layout. With
  // one, C is R (stored like C, so D's layout describes it), or D holding R converted to D's dtype.
  const void* c = d;
  if (res_ && plan_.res_into_d) GEXEC_TRY(launch_convert(res_, plan_.res, d, types.d, s.batch * s.m * s.n, stream));
  else if (res_) c = res_;
  GEXEC_CUBLAS_TRY(cublasLtMatmul(device_->cublaslt(), desc_.get(), &alpha, x, layout_x_.get(), y, layout_y_.get(),
                                  &beta, c, layout_d_.get(), d, layout_d_.get(), &candidates_.algo(),
                                  workspace_, kGemmWorkspaceBytes, stream));
  if (pad.pad && pad.d.padded) {
    // The valid m x n block of the padded D goes to C, which the bias kernel below (if the
    // epilogue was refused) then works on: padding implies no output conversion.
    GEXEC_TRY(launch_pad_copy(c_, view.ld_d, d, pad.d.ld, view.m, view.n, dtype_size(types.d), stream));
    d = c_;
  }
  if (epi_.needs_tail)
    GEXEC_TRY(launch_bias_act(d, types.d, s.batch, s.m, s.n, s.layout_c, s.has_bias ? bias_ : nullptr, plan_.bias,
                              plan_.act, stream));
  if (types.convert_out) GEXEC_TRY(launch_convert(d, types.d, c_, plan_.c, s.batch * s.m * s.n, stream));
  return {};
}

Result<std::unique_ptr<Kernel>> make_cublaslt_gemm(CudaDevice& device, const KernelDef& def, const Graph& g,
                                                   const Op& op, const Binding& binding, const KernelOptions& options) {
  auto k = CublasLtGemm::create(device, def, g, op, binding, options);
  if (!k) return k.error();
  return std::unique_ptr<Kernel>(std::move(*k));
}

}  // namespace gexec::cuda
