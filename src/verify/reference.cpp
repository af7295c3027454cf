// The CPU reference: the graph as loaded, op by op, in double, each result rounded to its dtype.
#include "gexec/verify/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <numbers>
#include <numeric>
#include <thread>

#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/ir/grouped_shape.hpp"
#include "gexec/ir/rounding.hpp"
#include "in_step.hpp"
#include "ref_math.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/product_engine.hpp"
#include "gexec/ir/zeros.hpp"
#include "exact_codes.hpp"
#include "parallel.hpp"

namespace gexec {
namespace {

// Scales, per element: a graph input's is |value|; a product's is |alpha| * sum_k |a_ik b_kj| +
// |bias_j| (magnitudes of the operands' values); BIAS_ADD and ADD add their operands' scales;
// RELU keeps its input's (it is 1-Lipschitz); GELU multiplies it by kGeluSlope, SILU by
// kSiluSlope; MUL multiplies its operands' scales; SUB, DIV, SIGMOID, TANH, ERF and POW as
// ref_math.hpp's elementwise() says (a constant operand is exact, its scale its magnitude); a residual adds |beta| * scale(R); CAST keeps
// max(scale, |rounded value|). FUSED_ELEMENTWISE steps follow the same rules (ref_math.hpp's
// elementwise(), shared with the sampled reference), step by step.
//
// Variances (bound.hpp), per element: a graph input's is 0 (the device reads the same bytes).
// A tensor that an op rounds carries var (before its rounding) + bound::rounding_var(value) into
// the ops that read it. A product carries sum_k (var(a) (b^2 + var(b)) + a^2 var(b)) times
// alpha^2, adds the accumulation and TF32 terms and the bias's variance; ADD and BIAS_ADD add
// their operands'; RELU keeps its input's; GELU multiplies it by kGeluSlope^2; MUL and SILU as
// ref_math.hpp says; a residual adds beta^2 var(R).

// A tensor's values, scales and variances in logical (row-major) order. Layouts are applied only
// where bytes come in and results go out, so every op indexes its operands the same way.
struct Vals {
  std::vector<double> value, scale, var;
  bool rounded = false;
  DType dtype = DType::f32;
  double ulp_floor = 0;  // as ref::Elem's: an f8 tensor's subnormal step
  bool repeats_down = false, repeats_across = false;  // as RefTensor's
  // The variance this element carries into the ops that read it.
  double carried(size_t l) const { return var[l] + (rounded ? bound::rounding_var(dtype, value[l], ulp_floor) : 0.0); }
  ref::Elem elem(size_t l) const { return {value[l], scale[l], var[l], rounded, dtype, ulp_floor}; }
};

using ref::gelu_erf;
using ref::gelu_tanh;
using ref::kGeluSlope;
using ref::kSiluSlope;
using ref::relu;
using ref::round_to;
using ref::silu;
using ref::storage_of;

Result<Vals> from_bytes(const Tensor& t, const std::vector<uint8_t>& bytes) {
  if (static_cast<int64_t>(bytes.size()) != t.bytes())
    return bad_input("input \"" + t.name + "\" has " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(t.bytes()));
  const size_t n = static_cast<size_t>(t.numel());
  Vals v{{}, {}, {}, false, t.dtype};
  assign_zeros(v.value, n), assign_zeros(v.scale, n), assign_zeros(v.var, n);
  ref::for_chunks(int64_t(n), ref::kChunk, [&](int64_t, int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) {
      v.value[size_t(l)] = load_real(bytes.data(), t, storage_of(t, l));  // f8: stored x scale, in double
      v.scale[size_t(l)] = std::fabs(v.value[size_t(l)]);
    }
  });
  return v;
}

// The tensor in storage order; its vectors are taken over where that is the logical order.
RefTensor to_storage(const Tensor& t, Vals&& v) {
  if (t.rank() != 2 || t.layout != Layout::colmajor)
    return RefTensor{std::move(v.value), std::move(v.scale), std::move(v.var), v.rounded, v.repeats_down,
                     v.repeats_across};
  const size_t n = v.value.size();
  RefTensor r{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n), v.rounded, v.repeats_down,
              v.repeats_across};
  for (int64_t l = 0; l < static_cast<int64_t>(n); ++l) {
    r.value[storage_of(t, l)] = v.value[l];
    r.scale[storage_of(t, l)] = v.scale[l];
    r.var[storage_of(t, l)] = v.var[l];
  }
  return r;
}

bool any_variance(const Vals& v) {
  if (v.rounded) return true;
  for (double x : v.var)
    if (x != 0) return true;
  return false;
}

// The amax of an f8 result (its second output): max |v| over the values before their scaling and
// rounding, as f32; its error scale is the largest of the elements' and its variance the largest
// carried, which bound how far a device's amax (taken over its own values) may be from it.
// NaNs are left out. Maxima only: partial ones merge in any order.
struct Amax {
  double value = 0, scale = 0, var = 0;
  void add(double v, double sc, double vr) {
    if (std::fabs(v) > value) value = std::fabs(v);
    scale = std::max(scale, sc);
    var = std::max(var, vr);
  }
  void merge(const Amax& o) { add(o.value, o.scale, o.var); }
  Vals vals() const {
    return {{double(float(value))}, {std::max(scale, double(float(value)))}, {var}, true, DType::f32};
  }
};

// S of a quantizing CAST (block_scale.hpp): per block of Y, the amax of X's values over the
// largest finite f8 value, in f32 as the kernels compute it; its error scale and variance are the
// amax's (as Amax bounds a device's amax) over that value.
Vals block_scales(const Tensor& y, const Vals& x) {
  const std::vector<int64_t> shape = block_scale_shape(y);
  const int64_t cols = y.shape[1], br = y.scale.block[0], bc = y.scale.block[1];
  const double top = f8_format(y.dtype).max_finite;
  Vals s{{}, {}, {}, true, DType::f32};
  const size_t n = size_t(shape[0] * shape[1]);
  s.value.resize(n), s.scale.resize(n), s.var.resize(n);
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      Amax m;
      for (int64_t r = i * br; r < std::min(y.shape[0], (i + 1) * br); ++r)
        for (int64_t c = j * bc; c < std::min(cols, (j + 1) * bc); ++c) {
          const size_t l = size_t(r * cols + c);
          m.add(x.value[l], x.scale[l], x.carried(l));
        }
      const size_t k = size_t(i * shape[1] + j);
      s.value[k] = block_scale_of(float(m.value), y.dtype);
      s.scale[k] = std::max(s.value[k], m.scale / top);
      s.var[k] = m.var / (top * top);
      // A block whose values may all be 0 on a device (its amax within its error of 0: an f32
      // GELU of a very negative value that cancels to 0 where the double one is 1e-9) gets S = 1
      // there, not amax / top: no bound covers both, so that S is not compared (compare.cpp).
      if (m.value > 0 && m.var > 0 && m.value <= bound::kTail * std::sqrt(m.var))
        s.var[k] = std::numeric_limits<double>::infinity();
    }
  return s;
}

// The graph with every block scale whose S is a graph input given S's values (from its bytes);
// the S that a CAST computes is given to its tensor when the reference reaches that CAST.
Result<Graph> with_input_block_scales(const Graph& g, const std::vector<bool>& written,
                                      const std::map<std::string, std::vector<uint8_t>>& inputs) {
  Graph r = g;
  for (Tensor& t : r.tensors) {
    if (!t.scale.is_block() || t.scale.tensor < 0 || written[size_t(t.scale.tensor)]) continue;
    const Tensor& s = g.tensor(t.scale.tensor);
    auto it = inputs.find(s.name);
    if (it == inputs.end()) return bad_input("no values for graph input \"" + s.name + "\" (the block scale of \"" +
                                             t.name + "\")");
    if (int64_t(it->second.size()) != s.bytes())
      return bad_input("input \"" + s.name + "\" has " + std::to_string(it->second.size()) + " bytes, expected " +
                       std::to_string(s.bytes()));
    t = with_block_values(t, reinterpret_cast<const float*>(it->second.data()));
  }
  return r;
}

// One operand of a product: a graph input straight from its bytes (its values need no copy of
// their own), else the values an op produced, with what they carry where the product needs it.
struct Operand {
  ProductOperand op;
  std::vector<double> carried;
  bool repeats_down = false, repeats_across = false;  // its Vals' (a graph input's: none)
};

// Whether any element of v carries a variance into its readers.
bool carries_any(const Vals& v) {
  for (size_t l = 0; l < v.value.size(); ++l)
    if (v.carried(l) > 0) return true;
  return false;
}

// MATMUL and GEMM_BIAS_ACT: what the engine sums, and what this side adds per element of C.
struct ProductPlan {
  GemmShape s;
  ProductJob job;
  const Vals* bias = nullptr;  // in[2] where the product has a bias
  const Vals* res = nullptr;   // the residual R, or null
  Act act = Act::none;
  const Tensor* ct = nullptr;  // C
  DType dt = DType::f32;
  bool bias_converted = false, res_converted = false;
  DType bias_to = DType::f32;
  int tf32_operands = 0;
  double a2 = 0;
  bool repeats_down = false, repeats_across = false;
  ref::KLines lines_a, lines_b;  // with carried variances
  Precision prec;

  // Element x of C (flattened over the batch) from its sums: v, sc and var (the carried sums' or
  // 0) in, the reference's value, scale and variance out; `square` and `block_sq` its TF32 and
  // blocked accumulator sums where the job has them.
  void finish(size_t x, double& v, double& sc, double& var, double square, double block_sq, Amax& local) const {
    if (job.kind.carried) {
      const int64_t e = int64_t(x) / (s.m * s.n), j = int64_t(x) % s.n;
      var += ref::in_step_var(a2, lines_a, int64_t(x) / s.n, lines_b, (s.b_batched ? e : 0) * s.n + j);
    }
    if (tf32_operands > 0) var += bound::tf32_var(tf32_operands, square);
    var += bound::product_accumulation_var(prec, s.k, sc, job.kind.block > 0 ? block_sq * a2 : 0.0);
    var += bound::coefficient_var(s.alpha, sc);
    // A kernel that stores the product in the output dtype before its bias / activation rounds
    // it once more (by itself: the reference does not), a uniform error of ulp^2 / 12. With a
    // residual, what it stores is the product plus beta * R (cuBLASLt's D = AB + beta C).
    if (prec.product_rounded && (bias || act != Act::none))
      var += bound::single_rounding_var(dt, res ? v + s.beta * res->value[x] : v) +
             (res ? bound::single_rounding_var(dt, v) : 0.0);  // the product alone, rounded before beta R
    if (bias) {
      const size_t j = x % static_cast<size_t>(s.n);
      v += bias->value[j];
      sc += bias->scale[j];
      // A kernel may convert a wider bias to the output dtype once (cuBLASLt does).
      var += bias->carried(j) + (bias_converted ? bound::single_rounding_var(bias_to, bias->value[j]) : 0.0);
    }
    if (res) {  // inside the activation, as cuBLASLt adds beta * C (graph-format.md)
      v += s.beta * res->value[x];
      sc += std::fabs(s.beta) * res->scale[x];
      var += s.beta * s.beta * (res->carried(x) + (res_converted ? bound::single_rounding_var(dt, res->value[x]) : 0.0)) +
             bound::coefficient_var(s.beta, std::fabs(s.beta) * res->scale[x]);
    }
    var += bound::epilogue_var(int(bias != nullptr) + int(res != nullptr), sc);
    if (act == Act::relu) var = bound::relu_var(v, var), v = relu(v);
    if (act == Act::gelu)
      var = var * kGeluSlope * kGeluSlope + bound::gelu_eval_var(v) + bound::approx_gelu_var(v, prec.gelu_tanh_rel),
      v = gelu_tanh(v), sc *= kGeluSlope;
    if (act == Act::gelu_erf)  // as the GELU op of the erf form (ref_math.hpp)
      var = var * kGeluSlope * kGeluSlope + bound::gelu_eval_var(v) + bound::approx_gelu_var(v, prec.gelu_tanh_rel),
      v = gelu_erf(v), sc *= kGeluSlope;
    if (act == Act::silu)  // as the SILU op (ref_math.hpp)
      var = var * kSiluSlope * kSiluSlope + bound::gelu_eval_var(v), v = silu(v), sc *= kSiluSlope;
    local.add(v, sc, var);
    // A batched C is rank 3 and has no per-axis scale, so x indexes it whole.
    const double rounded = ref::round_real(*ct, int64_t(x), v);
    // A rounding up to f8 may exceed the magnitudes that produced the value; the scale bounds both.
    sc = is_f8(dt) ? std::max(sc, std::fabs(rounded)) : sc;
    v = rounded;
  }
};

Result<ProductPlan> plan_product(const Graph& g, const Op& op, const Operand& a, const Operand& b,
                                 const std::vector<const Vals*>& in, const Precision& prec) {
  std::string why;
  auto shape = gemm_shape(g, op, &why);
  if (!shape) return bad_input(why);
  ProductPlan p;
  p.s = *shape;
  const GemmShape& s = p.s;
  p.prec = prec;
  const int64_t b_count = s.b_batched ? s.batch : 1;
  if (a.op.tensor->numel() != s.batch * s.m * s.k || b.op.tensor->numel() != b_count * s.k * s.n)
    return bad_input("product operands do not match their geometry");
  ProductJob& job = p.job;
  job.op = op.name;
  job.kind.shape = s;
  job.kind.carried = a.op.carries() || b.op.carries();
  job.kind.carried_a = a.op.carries();
  job.kind.carried_b = b.op.carries();
  // TF32: sum_k a^2 b^2 for the input rounding of the f32 operands.
  p.tf32_operands = prec.tf32 ? int(a.op.tensor->dtype == DType::f32) + int(b.op.tensor->dtype == DType::f32) : 0;
  job.kind.squares = p.tf32_operands > 0;
  // A blocked accumulator (FP8 without fast accumulation): the blocks' magnitudes squared.
  if (bound::blocked_accumulation(prec, s.k)) job.kind.block = prec.accumulate_block;
  job.a = a.op;
  job.b = b.op;
  const size_t count = size_t(s.batch * s.m * s.n);
  // Operand errors that move in step along K (in_step.hpp), from the lines of op(A) and op(B)^T;
  // an operand whose errors may repeat along its K lines is taken as coherent there.
  const auto at_a = [&](int64_t r, int64_t kk) {
    const int64_t l = (r / s.m) * s.m * s.k + (s.trans_a ? kk * s.m + r % s.m : (r % s.m) * s.k + kk);
    return std::pair<double, double>{a.op.at(l), a.op.carried_at(l)};
  };
  const auto at_b = [&](int64_t q, int64_t kk) {
    const int64_t l = (q / s.n) * s.k * s.n + (s.trans_b ? (q % s.n) * s.k + kk : kk * s.n + q % s.n);
    return std::pair<double, double>{b.op.at(l), b.op.carried_at(l)};
  };
  // op(A)'s and op(B)'s repeats, from the stored tensors' (a transpose swaps the directions).
  const bool a_down = s.trans_a ? a.repeats_across : a.repeats_down, a_across = s.trans_a ? a.repeats_down : a.repeats_across;
  const bool b_down = s.trans_b ? b.repeats_across : b.repeats_down, b_across = s.trans_b ? b.repeats_down : b.repeats_across;
  if (job.kind.carried) {
    p.lines_a = ref::k_lines(s.batch * s.m, s.k, at_a, a_across);
    p.lines_b = ref::k_lines(b_count * s.n, s.k, at_b, b_down);
  }
  if (s.has_bias && static_cast<int64_t>(in[2]->value.size()) != s.n)
    return bad_input("bias length " + std::to_string(in[2]->value.size()) + " differs from N=" +
                     std::to_string(s.n));
  p.bias = s.has_bias ? in[2] : nullptr;
  p.res = s.has_residual ? in.back() : nullptr;
  if (p.res && p.res->value.size() != count) return bad_input("residual R does not match C's elements");
  p.act = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
  p.ct = &g.tensor(op.outputs[0]);
  p.dt = p.ct->dtype;
  p.bias_to = ref::bias_read_dtype(is_f8_product(g, op), p.dt);
  p.bias_converted = p.bias && !ref::exact_cast(g.tensor(op.inputs[2]).dtype, p.bias_to);
  // C's errors repeat down its columns where op(A)'s rows are one row repeated (every row of C is
  // then one computation), where an operand's or R's do, and where a bias adds one error per
  // column; across its rows where op(B)'s columns are one column repeated, or an operand's or R's do.
  p.repeats_down = ref::lines_repeat(s.batch * s.m, s.m, s.k, at_a) || a_down || b_down ||
                   (p.bias && (p.bias_converted || carries_any(*p.bias))) || (p.res && p.res->repeats_down);
  p.repeats_across =
      ref::lines_repeat(b_count * s.n, s.n, s.k, at_b) || a_across || b_across || (p.res && p.res->repeats_across);
  // cuBLASLt reads C in D's dtype: a wider R is converted (rounded) to it first (cublaslt_caps.cpp).
  p.res_converted = p.res && !ref::exact_cast(g.tensor(op.inputs.back()).dtype, p.dt);
  p.a2 = s.alpha * s.alpha;
  return p;
}

// Elements [x0, x1) of C finished in place (ProductPlan::finish), in chunks of ref::kChunk
// counted from x0, each chunk's amax kept apart: chunk c of the whole is amaxes[c + x0 / kChunk].
void finish_range(const ProductPlan& p, size_t x0, size_t x1, double* value, double* scale, double* var,
                  const double* squares, const double* block_sq, bool var_in, std::vector<Amax>* amaxes) {
  ref::for_chunks(int64_t(x1 - x0), ref::kChunk, [&](int64_t chunk, int64_t k0, int64_t k1) {
    // Kept here and stored once: neighbouring chunks' maxima share cache lines, and updating them
    // per element from several threads took most of this loop's time (false sharing).
    Amax local;
    for (size_t k = size_t(k0); k < size_t(k1); ++k) {
      double v = value[k], sc = scale[k], vr = var_in ? var[k] : 0.0;
      p.finish(x0 + k, v, sc, vr, squares ? squares[k] : 0.0, block_sq ? block_sq[k] : 0.0, local);
      value[k] = v, scale[k] = sc, var[k] = vr;
    }
    if (amaxes) (*amaxes)[size_t(chunk) + x0 / size_t(ref::kChunk)] = local;
  });
}

// A product's operand that is a graph input, read from its bytes.
Status input_operand(Operand& o, const Tensor& t, const std::map<std::string, std::vector<uint8_t>>& inputs) {
  o.op.tensor = &t;
  const auto it = inputs.find(t.name);
  if (it == inputs.end()) return bad_input("no values for graph input \"" + t.name + "\"");
  if (static_cast<int64_t>(it->second.size()) != t.bytes())
    return bad_input("input \"" + t.name + "\" has " + std::to_string(it->second.size()) + " bytes, expected " +
                     std::to_string(t.bytes()));
  o.op.bytes = &it->second;
  return {};
}

Result<Vals> run_product(const Graph& g, const Op& op, const Operand& a, const Operand& b,
                         const std::vector<const Vals*>& in, ProductEngine& engine, const EngineProgress& progress,
                         const Precision& prec, Amax& amax) {
  auto plan = plan_product(g, op, a, b, in, prec);
  if (!plan) return plan.error();
  const ProductPlan& p = *plan;
  const ProductJob& job = p.job;
  const size_t count = size_t(p.s.batch * p.s.m * p.s.n);
  // Operands that carry nothing give no variance sums: C's variances start from zeros, filled on
  // another thread while the engine sums (512 MiB at 8192^2, ~0.1 s of first touch); or, with
  // TF32's sums of squares, in the squares' array (each element's square read before its variance
  // is stored there): one array fewer for the host to fault in.
  const bool var_in_squares = !job.kind.carried && job.kind.squares;
  std::vector<double> zero_var;
  std::jthread fill;
  if (!job.kind.carried && !var_in_squares)
    fill = std::jthread([&zero_var, count] {
      try {
        assign_zeros(zero_var, count);
      } catch (const std::bad_alloc&) {  // left empty: reported below
      }
    });
  auto sums = engine.sums(job, progress);
  if (fill.joinable()) fill.join();
  if (!sums) return sums.error();
  Vals out;
  out.value = std::move(sums->value);
  out.scale = std::move(sums->scale);
  std::vector<double> squares = var_in_squares ? std::vector<double>() : std::move(sums->squares);
  out.var = job.kind.carried ? std::move(sums->var) : var_in_squares ? std::move(sums->squares) : std::move(zero_var);
  if (out.value.size() != count || out.var.size() != count)
    return runtime_error("the reference's arrays for " + std::to_string(count) + " elements: out of host memory");
  const double* square_at = var_in_squares ? out.var.data() : job.kind.squares ? squares.data() : nullptr;
  std::vector<Amax> amaxes(size_t(std::max<int64_t>((int64_t(count) + ref::kChunk - 1) / ref::kChunk, 1)));
  finish_range(p, 0, count, out.value.data(), out.scale.data(), out.var.data(), square_at,
               job.kind.block > 0 ? sums->block_sq.data() : nullptr, job.kind.carried, &amaxes);
  for (const Amax& m : amaxes) amax.merge(m);
  out.rounded = true;
  out.dtype = p.dt;
  out.repeats_down = p.repeats_down;
  out.repeats_across = p.repeats_across;
  return out;
}

// Whether a cast from x to y keeps every value exactly.
using ref::exact_cast;

Result<Vals> run_elementwise(const Graph& g, const Op& op, const std::vector<const Vals*>& in, const Precision& prec,
                             Amax& amax) {
  const Tensor& y = g.tensor(op.outputs[0]);
  const Tensor& x = g.tensor(op.inputs[0]);
  const size_t n = in[0]->value.size();
  if (static_cast<int64_t>(n) != y.numel()) return bad_input("output element count differs from the input's");
  size_t bias_len = 0;
  if (op.type == OpType::BIAS_ADD) {
    bias_len = x.shape.empty() ? 0 : static_cast<size_t>(x.shape.back());
    if (bias_len == 0 || in[1]->value.size() != bias_len) return bad_input("bias length differs from X's last dimension");
  }
  if (in.size() != operand_count(op.type, op.attrs.constant.has_value()))
    return bad_input(std::string(op_type_name(op.type)) + " has " + std::to_string(in.size()) + " inputs");
  if (op.type != OpType::BIAS_ADD && in.size() > 1 && in[1]->value.size() != n)
    return bad_input(std::string(op_type_name(op.type)) + " operands differ in element count");
  if (!is_group_step_type(op.type)) return bad_input("not an elementwise op");
  const DType y2 = in.size() > 1 ? g.tensor(op.inputs[1]).dtype : op.attrs.constant ? DType::f32 : x.dtype;
  Vals out{{}, {}, {}, true, y.dtype};
  assign_zeros(out.value, n), assign_zeros(out.scale, n), assign_zeros(out.var, n);
  const int64_t chunks = (int64_t(n) + ref::kChunk - 1) / ref::kChunk;
  std::vector<Amax> amaxes(size_t(std::max<int64_t>(chunks, 1)));
  std::vector<char> rounded(amaxes.size(), 1);
  ref::for_chunks(int64_t(n), ref::kChunk, [&](int64_t chunk, int64_t l0, int64_t l1) {
    Amax local;  // stored once per chunk, as run_product's
    bool was_rounded = true;
    for (size_t l = size_t(l0); l < size_t(l1); ++l) {
      const size_t j = op.type == OpType::BIAS_ADD ? l % bias_len : l;
      const Vals& a = *in[0];
      ref::Elem second;
      if (in.size() > 1) second = in[1]->elem(j);
      else if (op.attrs.constant) second = ref::constant_elem(*op.attrs.constant);
      const ref::Elem r = ref::elementwise(op.type, op.attrs.approximate, y.dtype, x.dtype, y2,
                                           a.elem(l), second,
                                           prec.gelu_tanh_rel, ref::scale_of(y, int64_t(l)));
      // The amax (a CAST's second output) is of the value before its rounding.
      if (op.type == OpType::CAST) local.add(a.value[l], a.scale[l], a.carried(l));
      out.value[l] = r.value;
      out.scale[l] = r.scale;
      out.var[l] = r.var;
      was_rounded = r.rounded;  // the same for every element: the op's and dtypes' alone
    }
    amaxes[size_t(chunk)] = local;
    rounded[size_t(chunk)] = was_rounded;
  });
  for (const Amax& m : amaxes) amax.merge(m);
  out.rounded = n > 0 ? bool(rounded[0]) : true;
  // The inputs' repeats carry through; a bias's errors repeat down every column of the result.
  out.repeats_down = in[0]->repeats_down || (in.size() > 1 && in[1]->repeats_down) ||
                     (op.type == OpType::BIAS_ADD && carries_any(*in[1]));
  out.repeats_across = in[0]->repeats_across || (in.size() > 1 && in[1]->repeats_across);
  return out;
}

// FUSED_ELEMENTWISE: the steps per element, each rounded to its dtype as the graph says; one
// Vals per output, exactly those of the ops the group replaces.
Result<std::vector<Vals>> run_group(const Graph& g, const Op& op, const std::vector<const Vals*>& in,
                                    const Precision& prec) {
  if (auto problems = check_op(g, op); !problems.empty())
    return bad_input("FUSED_ELEMENTWISE does not check: " + problems[0]);
  const Tensor& first = g.tensor(op.outputs[0]);
  const size_t n = static_cast<size_t>(first.numel()), cols = static_cast<size_t>(first.shape.back());
  std::vector<Vals> outs;
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    const GroupStep& st = op.attrs.steps[size_t(op.attrs.results[o]) - op.inputs.size()];
    outs.push_back(Vals{{}, {}, {}, true, st.dtype});
    assign_zeros(outs.back().value, n), assign_zeros(outs.back().scale, n), assign_zeros(outs.back().var, n);
  }
  std::vector<DType> in_dtypes;
  for (TensorId t : op.inputs) in_dtypes.push_back(g.tensor(t).dtype);
  const int64_t chunks = (int64_t(n) + ref::kChunk - 1) / ref::kChunk;
  std::vector<std::vector<char>> rounded(outs.size(), std::vector<char>(size_t(std::max<int64_t>(chunks, 1)), 1));
  ref::for_chunks(int64_t(n), ref::kChunk, [&](int64_t chunk, int64_t l0, int64_t l1) {
    std::vector<ref::Elem> vals;
    std::vector<DType> dtypes;
    for (size_t l = size_t(l0); l < size_t(l1); ++l) {
      vals.clear();
      dtypes = in_dtypes;
      for (size_t i = 0; i < in.size(); ++i) {
        const Vals& v = *in[i];
        const size_t at = v.value.size() == n ? l : l % cols;  // a bias input is read at the column
        vals.push_back(v.elem(at));
      }
      ref::group_values(op.attrs, vals, dtypes, prec.gelu_tanh_rel);
      for (size_t o = 0; o < outs.size(); ++o) {
        const ref::Elem& e = vals[size_t(op.attrs.results[o])];
        outs[o].value[l] = e.value;
        outs[o].scale[l] = e.scale;
        outs[o].var[l] = e.var;
        // The same for every element; written once per chunk (neighbouring chunks share a cache line).
        if (l == size_t(l0)) rounded[o][size_t(chunk)] = e.rounded;
      }
    }
  });
  // As run_elementwise's: the inputs' repeats carry through, a bias input's errors repeat down.
  bool down = false, across = false;
  for (const Vals* v : in) {
    down = down || v->repeats_down || (v->value.size() != n && carries_any(*v));
    across = across || v->repeats_across;
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    outs[o].rounded = n > 0 ? bool(rounded[o][0]) : true;
    outs[o].repeats_down = down, outs[o].repeats_across = across;
  }
  return outs;
}

// GROUPED_GEMM (grouped_shape.hpp): each row of Y is a product's row with its group's weight, its
// element finished as ProductPlan::finish does (accumulation, alpha, the bias, the activation),
// in double; rows no group owns are an exact 0. Offsets that decrease or exceed T are data: a
// runtime error, as the kernels report them. W, when a graph input (w_vals null), is read from
// its stored bytes line by line: the experts' weights are the graph's largest tensors, and three
// doubles per element of them would take the reference's memory.
Result<Vals> run_grouped(const Graph& g, const Op& op, const std::vector<const Vals*>& in, const Vals* w_vals,
                         const std::vector<uint8_t>* w_bytes, const Precision& prec) {
  std::string why;
  const auto shape = grouped_shape(g, op, &why);
  if (!shape) return bad_input(why);
  const GroupedShape& s = *shape;
  const Vals &x = *in[0], &off = *in[2];
  const Vals* bias = s.has_bias ? in[3] : nullptr;
  const Tensor& wt = g.tensor(op.inputs[1]);
  if (!w_vals && (!w_bytes || int64_t(w_bytes->size()) != wt.bytes()))
    return bad_input("no values for W");
  std::vector<int32_t> ends(size_t(s.groups));
  for (size_t e = 0; e < ends.size(); ++e) ends[e] = round_to_i32(off.value[e]);
  if (std::string p = offsets_problem(ends.data(), s.groups, s.tokens); !p.empty()) return runtime_error(p);
  const Tensor& yt = g.tensor(op.outputs[0]);
  const size_t count = size_t(s.tokens * s.n);
  Vals y{{}, {}, {}, true, yt.dtype};
  assign_zeros(y.value, count), assign_zeros(y.scale, count), assign_zeros(y.var, count);
  // Blocks of up to 16 rows of one group: a block reads its group's weight once per panel of
  // columns, not once per row, which keeps the reference's memory traffic near the product's.
  constexpr int64_t kRows = 16, kCols = 512;
  struct Block { int64_t group, row0, rows; };
  std::vector<Block> blocks;
  for (int64_t e = 0, r = 0; e < s.groups; r = ends[size_t(e)], ++e)
    for (int64_t r0 = r; r0 < ends[size_t(e)]; r0 += kRows) blocks.push_back({e, r0, std::min(kRows, ends[size_t(e)] - r0)});
  const bool carried = any_variance(x) || (w_vals && any_variance(*w_vals));
  const double a2 = s.alpha * s.alpha;
  const bool blocked = bound::blocked_accumulation(prec, s.k);
  const int64_t block = blocked ? prec.accumulate_block : s.k;
  const OpType act_op = s.act == Act::relu                            ? OpType::RELU
                        : s.act == Act::gelu || s.act == Act::gelu_erf ? OpType::GELU
                        : s.act == Act::silu                           ? OpType::SILU
                                                                       : OpType::CAST;
  const GeluApprox approx = s.act == Act::gelu_erf ? GeluApprox::none : GeluApprox::tanh;
  ref::for_chunks(int64_t(blocks.size()), 1, [&](int64_t, int64_t b0, int64_t b1) {
    std::vector<double> v(size_t(kRows * kCols)), sc(v.size()), var(v.size()), line, line_var;
    // Blocked accumulation (FP8 tensor cores): each element's blocks' squared magnitudes (bq),
    // the current block's magnitude (cur, W [K, N] only).
    std::vector<double> bq(blocked ? v.size() : 0), cur(blocked ? v.size() : 0);
    // `len` stored elements of W from storage index `at`, as doubles, and their carried variances.
    auto w_line = [&](size_t at, int64_t len) -> const double* {
      if (w_vals) {
        if (carried) {
          line_var.resize(size_t(len));
          for (int64_t j = 0; j < len; ++j) line_var[size_t(j)] = w_vals->carried(at + size_t(j));
        }
        return w_vals->value.data() + at;
      }
      line.resize(size_t(len));
      // An f8 W's real values: code x scale (its tensor-wise scale; graph-format.md, GROUPED_GEMM).
      for (int64_t j = 0; j < len; ++j) line[size_t(j)] = load_real(w_bytes->data(), wt, int64_t(at) + j);
      if (carried) line_var.assign(size_t(len), 0.0);
      return line.data();
    };
    std::vector<double> x_carried;
    for (int64_t bi = b0; bi < b1; ++bi) {
      const Block& bl = blocks[size_t(bi)];
      x_carried.clear();
      for (int64_t j0 = 0; j0 < s.n; j0 += kCols) {
        const int64_t cols = std::min(kCols, s.n - j0);
        std::fill(v.begin(), v.end(), 0.0), std::fill(sc.begin(), sc.end(), 0.0), std::fill(var.begin(), var.end(), 0.0);
        std::fill(bq.begin(), bq.end(), 0.0), std::fill(cur.begin(), cur.end(), 0.0);
        if (!s.trans_b) {  // W_g [K, N]: row k read once for the block's rows, along j (vectorised)
          for (int64_t k = 0; k < s.k; ++k) {
            const double* wr = w_line(size_t(grouped_w_index(s, bl.group, k, j0)), cols);
            for (int64_t i = 0; i < bl.rows; ++i) {
              const size_t xl = size_t((bl.row0 + i) * s.k + k);
              const double xv = x.value[xl], xa = std::fabs(xv);
              double *vi = v.data() + i * kCols, *si = sc.data() + i * kCols;
              for (int64_t j = 0; j < cols; ++j) vi[j] += xv * wr[j], si[j] += xa * std::fabs(wr[j]);
              if (blocked) {
                double* ci = cur.data() + i * kCols;
                for (int64_t j = 0; j < cols; ++j) ci[j] += xa * std::fabs(wr[j]);
              }
              if (carried) {
                const double xc = x.carried(xl);
                double* ri = var.data() + i * kCols;
                for (int64_t j = 0; j < cols; ++j)
                  ri[j] += xc * (wr[j] * wr[j] + line_var[size_t(j)]) + xv * xv * line_var[size_t(j)];
              }
            }
            if (blocked && ((k + 1) % block == 0 || k + 1 == s.k))  // a block's end: its magnitude squared
              for (size_t o = 0; o < cur.size(); ++o) bq[o] += cur[o] * cur[o], cur[o] = 0.0;
          }
        } else {  // W_g [N, K]: column j of op(W) is a stored row, read along k
          if (carried && x_carried.empty()) {  // the block's rows' carried variances, once
            x_carried.resize(size_t(bl.rows * s.k));
            for (int64_t l = 0; l < bl.rows * s.k; ++l) x_carried[size_t(l)] = x.carried(size_t(bl.row0 * s.k + l));
          }
          for (int64_t j = 0; j < cols; ++j) {
            const double* wr = w_line(size_t(grouped_w_index(s, bl.group, 0, j0 + j)), s.k);
            for (int64_t i = 0; i < bl.rows; ++i) {
              const double* xr = x.value.data() + (bl.row0 + i) * s.k;
              // Four partial sums: independent chains the core overlaps (the order is the
              // reference's own; double leaves it far below any bound).
              // Magnitudes by accumulation block (the whole of K where not blocked).
              double dv[4] = {}, mag = 0, sq = 0;
              for (int64_t k0 = 0; k0 < s.k; k0 += block) {
                const int64_t k1 = std::min(s.k, k0 + block);
                double ds[4] = {};
                int64_t k = k0;
                for (; k + 4 <= k1; k += 4)
                  for (int u = 0; u < 4; ++u) dv[u] += xr[k + u] * wr[k + u], ds[u] += std::fabs(xr[k + u] * wr[k + u]);
                for (; k < k1; ++k) dv[0] += xr[k] * wr[k], ds[0] += std::fabs(xr[k] * wr[k]);
                const double m = (ds[0] + ds[1]) + (ds[2] + ds[3]);
                mag += m, sq += m * m;
              }
              double dr = 0;
              if (carried) {
                const double* xc = x_carried.data() + i * s.k;
                for (int64_t q = 0; q < s.k; ++q) {
                  const double wc = line_var[size_t(q)];
                  dr += xc[q] * (wr[q] * wr[q] + wc) + xr[q] * xr[q] * wc;
                }
              }
              const size_t o = size_t(i * kCols + j);
              v[o] = (dv[0] + dv[1]) + (dv[2] + dv[3]), sc[o] = mag, var[o] = dr;
              if (blocked) bq[o] = sq;
            }
          }
        }
        for (int64_t i = 0; i < bl.rows; ++i) {
          const int64_t r = bl.row0 + i;
          for (int64_t j = 0; j < cols; ++j) {
            const size_t at = size_t(r * s.n + j0 + j), o = size_t(i * kCols + j);
            double val = s.alpha * v[o], mag = std::fabs(s.alpha) * sc[o], vr = a2 * var[o];
            vr += bound::product_accumulation_var(prec, s.k, mag, blocked ? a2 * bq[o] : 0.0) +
                  bound::coefficient_var(s.alpha, mag);
            if (bias) {
              const size_t bx = size_t(bl.group * s.n + j0 + j);
              val += bias->value[bx], mag += bias->scale[bx];
              vr += bias->carried(bx) + bound::epilogue_var(1, mag);
            }
            const ref::Elem pre{val, mag, vr, false, DType::f32};
            const ref::Elem out = ref::elementwise(act_op, approx, yt.dtype, DType::f32, DType::f32, pre, {},
                                                   prec.gelu_tanh_rel);
            y.value[at] = out.value, y.scale[at] = out.scale, y.var[at] = out.var;
          }
        }
      }
    }
  }, kRows * s.k * s.n);
  // A group's rows share its weight's errors (down), and a row's errors its activations' (across).
  y.repeats_down = x.repeats_down || (w_vals && (w_vals->repeats_down || w_vals->repeats_across)) ||
                   (bias && carries_any(*bias));
  y.repeats_across = x.repeats_across || (w_vals && (w_vals->repeats_across || w_vals->repeats_down));
  return y;
}

}  // namespace

double reference_work(const Graph& g) {
  double work = 0;
  for (const Op& op : g.ops)
    if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT)
      if (auto s = gemm_shape(g, op)) work += gemm_flops(*s) / 2;
  return work;
}

Result<std::map<std::string, RefTensor>> run_reference(const Graph& graph,
                                                       const std::map<std::string, std::vector<uint8_t>>& inputs,
                                                       const ProgressFn& progress, const Precision& prec,
                                                       ProductEngine* engine) {
  ProductEngine& products = engine ? *engine : cpu_product_engine();
  const double total_work = reference_work(graph);
  double done_work = 0;
  const size_t count = graph.tensors.size();
  std::vector<bool> written(count, false);
  for (const Op& op : graph.ops)
    for (TensorId t : op.outputs)
      if (t >= 0 && static_cast<size_t>(t) < count) written[t] = true;
  // Block scales read real values with S's values: a copy of the graph carries them.
  Graph resolved;
  const bool blocks = has_block_scales(graph);
  if (blocks) {
    auto r = with_input_block_scales(graph, written, inputs);
    if (!r) return r.error().with("reference");
    resolved = std::move(*r);
  }
  // A collective over one rank is the identity: a CAST to its own dtype (the backend-ops cases of
  // the collective kernels are such). Over more ranks it has no reference here (below).
  Graph single;
  const bool one_rank = std::any_of(graph.ops.begin(), graph.ops.end(),
                                    [](const Op& op) { return is_collective(op.type) && op.attrs.ranks == 1; });
  if (one_rank) {
    single = blocks ? resolved : graph;
    for (Op& op : single.ops)
      if (is_collective(op.type) && op.attrs.ranks == 1) op.type = OpType::CAST, op.attrs = {};
  }
  const Graph& g = one_rank ? single : blocks ? resolved : graph;

  // A tensor's values are dropped after its last reader (outputs are kept): the reference then
  // holds its live tensors only, not two doubles per element of every tensor of the graph.
  std::vector<size_t> last_reader(count, 0);
  std::vector<bool> keep(count, false);
  for (size_t o = 0; o < g.ops.size(); ++o)
    for (TensorId t : g.ops[o].inputs)
      if (t >= 0 && static_cast<size_t>(t) < count) last_reader[t] = o;
  for (TensorId t : g.outputs)
    if (t >= 0 && static_cast<size_t>(t) < count) keep[t] = true;

  std::vector<Vals> vals(count);
  std::vector<bool> ready(count, false);
  auto need = [&](TensorId t) -> Status {
    if (t < 0 || static_cast<size_t>(t) >= count) return bad_input("tensor id " + std::to_string(t) + " out of range");
    if (ready[t]) return {};
    const Tensor& tensor = g.tensor(t);
    if (written[t]) return bad_input("tensor \"" + tensor.name + "\" is read before the op that writes it");
    auto it = inputs.find(tensor.name);
    if (it == inputs.end()) return bad_input("no values for graph input \"" + tensor.name + "\"");
    auto v = from_bytes(tensor, it->second);
    if (!v) return v.error();
    vals[t] = std::move(v.value());
    ready[t] = true;
    return {};
  };

  // A product's operand that is a graph input is read from its bytes, without values of its own.
  auto operand = [&](Operand& o, TensorId t, const Vals* v) -> Status {
    if (!v) return input_operand(o, g.tensor(t), inputs);
    o.op.tensor = &g.tensor(t);
    o.op.value = &v->value;
    o.repeats_down = v->repeats_down, o.repeats_across = v->repeats_across;
    if (any_variance(*v)) {
      assign_zeros(o.carried, v->value.size());
      ref::for_chunks(int64_t(v->value.size()), ref::kChunk, [&](int64_t, int64_t l0, int64_t l1) {
        for (int64_t l = l0; l < l1; ++l) o.carried[size_t(l)] = v->carried(size_t(l));
      });
      o.op.carried = &o.carried;
    }
    return {};
  };

  const std::vector<char> exact_casts = ref::exact_f8_casts(g);
  for (const Op& op : g.ops) {
    // A collective sums or joins the values of other ranks, which one graph's reference does not
    // have: a sharded run is checked against the reference of the graph it was cut from.
    if (is_collective(op.type))
      return bad_input("op " + op.name + " is " + std::string(op_type_name(op.type)) +
                       ", a collective of a sharded run; the reference is of the unsharded graph (run it with --tp N)");
    const bool product = op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT;
    std::vector<const Vals*> in;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const TensorId t = op.inputs[k];
      const bool from_bytes = product ? k < 2 : op.type == OpType::GROUPED_GEMM && k == 1;
      if (from_bytes && t >= 0 && static_cast<size_t>(t) < count && !ready[t] && !written[t]) {
        in.push_back(nullptr);  // from its bytes
        continue;
      }
      Status s = need(t);
      if (!s) return s.error().with("reference, op " + op.name);
      in.push_back(&vals[t]);
    }
    const bool group = op.type == OpType::FUSED_ELEMENTWISE;
    // One output, or two where the second is an f8 result's amax; a group writes up to four.
    bool outs_ok = !op.outputs.empty() && (group || op.outputs.size() <= 2);
    for (TensorId t : op.outputs) outs_ok = outs_ok && t >= 0 && static_cast<size_t>(t) < count;
    if (!outs_ok || in.empty())
      return bad_input("reference, op " + op.name + ": expected inputs and one output (and an amax)");
    if (group) {
      auto r = run_group(g, op, in, prec);
      if (!r) return r.error().with("reference, op " + op.name);
      for (size_t o = 0; o < op.outputs.size(); ++o) {
        vals[op.outputs[o]] = std::move((*r)[o]);
        ready[op.outputs[o]] = true;
      }
      continue;
    }
    if ((product || is_binary_type(op.type)) && in.size() < 2 && !op.attrs.constant)
      return bad_input("reference, op " + op.name + ": expected two inputs");
    std::function<void(double)> op_progress;
    if (progress && product && total_work > 0)
      if (auto s = gemm_shape(g, op))
        op_progress = [&progress, done_work, share = gemm_flops(*s) / 2, total_work](double d) {
          progress(std::min(1.0, (done_work + d * share) / total_work));
        };
    Amax amax;
    Result<Vals> r = Vals{};
    if (product) {
      Operand a, b;
      Status s = operand(a, op.inputs[0], in[0]);
      if (s) s = operand(b, op.inputs[1], in[1]);
      if (!s) return s.error().with("reference, op " + op.name);
      r = run_product(g, op, a, b, in, products, op_progress, prec, amax);
    } else if (op.type == OpType::GROUPED_GEMM) {
      const auto w_in = in[1] ? inputs.end() : inputs.find(g.tensor(op.inputs[1]).name);
      r = run_grouped(g, op, in, in[1], w_in == inputs.end() ? nullptr : &w_in->second, prec);
    } else if (writes_block_scale(g, op)) {
      // The quantizing CAST: S first, from X's values; then Y stored with it.
      if (in[0]->value.size() != size_t(g.tensor(op.outputs[0]).numel()))
        return bad_input("reference, op " + op.name + ": X and Y differ in element count");
      Vals sv = block_scales(g.tensor(op.outputs[0]), *in[0]);
      const std::vector<float> s32(sv.value.begin(), sv.value.end());
      Tensor& y = resolved.tensors[size_t(op.outputs[0])];
      y = with_block_values(y, s32.data());
      r = run_elementwise(g, op, in, prec, amax);
      vals[op.outputs[1]] = std::move(sv);
      ready[op.outputs[1]] = true;
    } else {
      r = run_elementwise(g, op, in, prec, amax);
    }
    if (!r) return r.error().with("reference, op " + op.name);
    // A CAST whose codes every device reproduces (exact_codes.hpp): no rounding it could do otherwise.
    if (exact_casts[size_t(&op - g.ops.data())]) r->rounded = false;
    r->ulp_floor = subnormal_step(g.tensor(op.outputs[0]));  // f8 outputs: products and CASTs
    vals[op.outputs[0]] = std::move(r.value());
    ready[op.outputs[0]] = true;
    if (op.outputs.size() == 2 && !writes_block_scale(g, op)) {
      vals[op.outputs[1]] = amax.vals();
      ready[op.outputs[1]] = true;
    }
    const size_t here = static_cast<size_t>(&op - g.ops.data());
    for (TensorId t : op.inputs)
      if (last_reader[t] == here && !keep[t] &&
          std::find(op.outputs.begin(), op.outputs.end(), t) == op.outputs.end())
        vals[t] = Vals{};  // ready stays true: nothing reads it again
    if (progress && total_work > 0) {
      if (auto s = product ? gemm_shape(g, op) : std::nullopt) done_work += gemm_flops(*s) / 2;
      progress(std::min(1.0, done_work / total_work));
    }
  }

  std::map<std::string, RefTensor> out;
  for (TensorId t : g.outputs) {
    Status s = need(t);
    if (!s) return s.error().with("reference, output");
    // An output listed twice is converted once; the second copy comes from the first.
    const std::string& name = g.tensor(t).name;
    if (out.count(name)) continue;
    out[name] = to_storage(g.tensor(t), std::move(vals[t]));
  }
  return out;
}

bool streamable(const Graph& g) {
  if (g.ops.size() != 1 || g.outputs.size() != 1) return false;
  const Op& op = g.ops[0];
  if ((op.type != OpType::MATMUL && op.type != OpType::GEMM_BIAS_ACT) || op.outputs.size() != 1 ||
      op.outputs[0] != g.outputs[0] || op.inputs.size() < 2)
    return false;
  for (TensorId t : op.inputs)
    if (t < 0 || size_t(t) >= g.tensors.size() || t == op.outputs[0]) return false;
  const Tensor& c = g.tensor(op.outputs[0]);
  return c.rank() == 2 && c.layout == Layout::rowmajor;
}

int64_t stream_rows(int64_t rows, int64_t n, int64_t panel_elements) {
  const int64_t q = ref::kChunk / std::gcd(std::max<int64_t>(n, 1), ref::kChunk);
  const int64_t want = std::max<int64_t>(panel_elements / std::max<int64_t>(n, 1), 1) / q * q;
  return std::min(rows, std::max(q, want));
}

Status stream_reference(const Graph& g, const std::map<std::string, std::vector<uint8_t>>& inputs,
                        const Precision& prec, ProductEngine& engine, int64_t panel_elements,
                        const std::function<void(int64_t, const RefTensor&)>& fn, const ProgressFn& progress) {
  if (!streamable(g)) return bad_input("reference: the graph is not one product of graph inputs (streamable)");
  const Op& op = g.ops[0];
  // A and B from their bytes; bias and residual as values.
  Operand a, b;
  for (auto [o, t] : {std::pair<Operand*, TensorId>{&a, op.inputs[0]}, {&b, op.inputs[1]}})
    if (Status st = input_operand(*o, g.tensor(t), inputs); !st) return st.error().with("reference, op " + op.name);
  std::vector<Vals> held(op.inputs.size());
  std::vector<const Vals*> in{nullptr, nullptr};
  for (size_t k = 2; k < op.inputs.size(); ++k) {
    const Tensor& t = g.tensor(op.inputs[k]);
    const auto it = inputs.find(t.name);
    if (it == inputs.end()) return bad_input("reference, op " + op.name + ": no values for graph input \"" + t.name + "\"");
    auto v = from_bytes(t, it->second);
    if (!v) return v.error().with("reference, op " + op.name);
    held[k] = std::move(*v);
    in.push_back(&held[k]);
  }
  auto plan = plan_product(g, op, a, b, in, prec);
  if (!plan) return plan.error().with("reference, op " + op.name);
  const ProductPlan& p = *plan;
  const ProductJob& job = p.job;
  const int64_t n = p.s.n, rows = stream_rows(p.s.batch * p.s.m, n, panel_elements);
  RefTensor ref;
  ref.rounded = true;
  ref.repeats_down = p.repeats_down, ref.repeats_across = p.repeats_across;
  std::vector<double> var;  // C's variances where the sums carry none (reused from panel to panel)
  const bool var_in_squares = !job.kind.carried && job.kind.squares;
  const PanelFn panel = [&](int64_t row0, int64_t panel_rows, ProductSums& sums) -> Status {
    const size_t count = size_t(panel_rows * n), x0 = size_t(row0 * n);
    if (sums.value.size() != count || sums.scale.size() != count)
      return runtime_error("a panel of the wrong size");  // (the cross-check refuses such panels first)
    std::vector<double>& v = job.kind.carried ? sums.var : var_in_squares ? sums.squares : var;
    if (v.size() != count) v.resize(count);
    finish_range(p, x0, x0 + count, sums.value.data(), sums.scale.data(), v.data(),
                 var_in_squares ? v.data() : job.kind.squares ? sums.squares.data() : nullptr,
                 job.kind.block > 0 ? sums.block_sq.data() : nullptr, job.kind.carried, nullptr);
    // Lent to fn, then handed back: the engine reuses its arrays for the next panel.
    ref.value.swap(sums.value), ref.scale.swap(sums.scale), ref.var.swap(v);
    fn(int64_t(x0), ref);
    ref.value.swap(sums.value), ref.scale.swap(sums.scale), ref.var.swap(v);
    return {};
  };
  if (Status st = engine.stream(job, rows, progress, panel); !st) return st.error().with("reference, op " + op.name);
  return {};
}

}  // namespace gexec
