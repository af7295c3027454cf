// The sampled reference: the graph's outputs at chosen elements only, bit for bit the full
// reference's values there, at a cost of about samples * K for a product on graph inputs.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <unordered_set>

#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/ir/gemm_shape.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "exact_codes.hpp"
#include "parallel.hpp"
#include "in_step.hpp"
#include "ref_math.hpp"

namespace gexec {
namespace {

using ref::storage_of;

bool is_product(const Op& op) { return op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT; }

// One element: value, scale, variance before its own rounding, and whether its op rounds.
using VS = ref::Elem;  // value, scale, variance, rounded, dtype
using ref::exact_cast;

// Evaluates single elements of tensors. Every tensor is one of: a graph input (read from its
// bytes), computed in full beforehand (`full`), or written by an op evaluated per element.
// Every arithmetic step follows reference.cpp's in the same order, so the bits agree.
class ElementEval {
  struct Dense {
    std::vector<double> a, ca, b, cb;
    bool carries = false;
    ref::KLines lines_a, lines_b;  // with carries: in_step.hpp's lines, as reference.cpp's
  };

 public:
  ElementEval(const Graph& g, const GraphIndex& idx, const Precision& prec)
      : g_(g), idx_(idx), prec_(prec), bytes_(g.tensors.size()), full_(g.tensors.size()), shape_(g.ops.size()),
        dense_(g.ops.size()), floor_(g.tensors.size()), exact_casts_(ref::exact_f8_casts(g)) {
    for (size_t t = 0; t < g.tensors.size(); ++t) floor_[t] = subnormal_step(g.tensors[t]);
  }

  void set_bytes(TensorId t, const std::vector<uint8_t>* b) { bytes_[size_t(t)] = b; }
  void set_full(TensorId t, const RefTensor* r) { full_[size_t(t)] = r; }
  void set_shape(OpId op, GemmShape s) { shape_[size_t(op)] = s; }

  // Lays out the operands of product `p`, evaluated per element, for its sums: op(A) as
  // [batch][m][k] and op(B) transposed, [batch or 1][n][k], values and (where the operand is
  // computed in full) carried variances, so that an element's sum reads two contiguous rows of
  // doubles instead of decoding K elements of each operand. The values are load_real's.
  void lay_out(OpId p) {
    const Op& op = g_.ops[size_t(p)];
    const GemmShape& s = *shape_[size_t(p)];
    auto d = std::make_unique<Dense>();
    const Operand a = operand(op.inputs[0]), b = operand(op.inputs[1]);
    d->carries = a.carries() || b.carries();
    const int64_t b_count = s.b_batched ? s.batch : 1;
    const int64_t rows_a = s.batch * s.m, rows_b = b_count * s.n;
    d->a.resize(size_t(rows_a * s.k));
    d->b.resize(size_t(rows_b * s.k));
    if (d->carries) d->ca.resize(d->a.size()), d->cb.resize(d->b.size());
    // Row r of op(A) (batch entry r / m, row r % m) and row q of op(B)^T, k ascending; each row
    // is k elements of work, so that a few thousand rows are spread over the threads too.
    ref::for_chunks(rows_a, 64, [&](int64_t, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t kk = 0; kk < s.k; ++kk) {
          const int64_t e = r / s.m, i = r % s.m;
          const VS x = a.at(e * s.m * s.k + (s.trans_a ? kk * s.m + i : i * s.k + kk));
          d->a[size_t(r * s.k + kk)] = x.value;
          if (d->carries) d->ca[size_t(r * s.k + kk)] = x.carried();
        }
    }, s.k);
    ref::for_chunks(rows_b, 64, [&](int64_t, int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q)
        for (int64_t kk = 0; kk < s.k; ++kk) {
          const int64_t e = q / s.n, j = q % s.n;
          const VS y = b.at(e * s.k * s.n + (s.trans_b ? j * s.k + kk : kk * s.n + j));
          d->b[size_t(q * s.k + kk)] = y.value;
          if (d->carries) d->cb[size_t(q * s.k + kk)] = y.carried();
        }
    }, s.k);
    if (d->carries) {
      const Dense& dd = *d;
      // Coherent lines as reference.cpp takes them: an operand whose errors repeat along its K lines.
      const bool a_across = a.full && (s.trans_a ? a.full->repeats_down : a.full->repeats_across);
      const bool b_down = b.full && (s.trans_b ? b.full->repeats_across : b.full->repeats_down);
      d->lines_a = ref::k_lines(rows_a, s.k, [&](int64_t r, int64_t kk) {
        return std::pair<double, double>{dd.a[size_t(r * s.k + kk)], dd.ca[size_t(r * s.k + kk)]};
      }, a_across);
      d->lines_b = ref::k_lines(rows_b, s.k, [&](int64_t q, int64_t kk) {
        return std::pair<double, double>{dd.b[size_t(q * s.k + kk)], dd.cb[size_t(q * s.k + kk)]};
      }, b_down);
    }
    dense_[size_t(p)] = std::move(d);
  }

  // Element `l` (logical, row-major) of t.
  VS at(TensorId t, int64_t l) const {
    VS v = computed_at(t, l);
    v.ulp_floor = floor_[size_t(t)];  // f8: the rounding's step below the normal range
    return v;
  }

 private:
  VS computed_at(TensorId t, int64_t l) const {
    const Tensor& tensor = g_.tensor(t);
    if (const RefTensor* r = full_[size_t(t)]) {
      const int64_t s = storage_of(tensor, l);
      return {r->value[size_t(s)], r->scale[size_t(s)], r->var[size_t(s)], r->rounded, tensor.dtype};
    }
    if (const std::vector<uint8_t>* b = bytes_[size_t(t)]) {
      const double v = load_real(b->data(), tensor, storage_of(tensor, l));
      return {v, std::fabs(v), 0.0, false, tensor.dtype};
    }
    const OpId p = idx_.producer[size_t(t)];
    const Op& op = g_.ops[size_t(p)];
    if (op.type == OpType::FUSED_ELEMENTWISE) return group_at(op, t, l);
    return is_product(op) ? product_at(op, *shape_[size_t(p)], *dense_[size_t(p)], l) : elementwise_at(op, l);
  }

  // A product's operand, which is always a graph input or computed in full: read directly in
  // the inner loop, which runs K times per element.
  struct Operand {
    const Tensor* t = nullptr;
    const RefTensor* full = nullptr;
    const uint8_t* bytes = nullptr;
    double floor = 0;  // ref::Elem::ulp_floor
    bool carries() const { return full != nullptr; }
    VS at(int64_t l) const {
      const int64_t s = storage_of(*t, l);
      if (full)
        return {full->value[size_t(s)], full->scale[size_t(s)], full->var[size_t(s)], full->rounded, t->dtype,
                floor};
      const double v = load_real(bytes, *t, s);
      return {v, std::fabs(v), 0.0, false, t->dtype};
    }
  };
  Operand operand(TensorId t) const {
    // (carries: whether the operand has variances of its own; graph inputs do not)
    return {&g_.tensor(t), full_[size_t(t)], bytes_[size_t(t)] ? bytes_[size_t(t)]->data() : nullptr, floor_[size_t(t)]};
  }

  VS product_at(const Op& op, const GemmShape& s, const Dense& d, int64_t l) const {
    const int64_t e = l / (s.m * s.n), i = (l / s.n) % s.m, j = l % s.n;
    const int64_t be = s.b_batched ? e : 0;
    const Operand a = operand(op.inputs[0]), b = operand(op.inputs[1]);
    // The same sums, in the same order, as reference.cpp's products (value and magnitude, the
    // carried variance in two parts, and sum a^2 b^2 for TF32), so that the bits agree.
    const bool carries = d.carries;
    const DType dt = g_.tensor(op.outputs[0]).dtype;
    const int tf32_operands = prec_.tf32 ? int(a.t->dtype == DType::f32) + int(b.t->dtype == DType::f32) : 0;
    // A blocked accumulator's partial magnitudes, as block_magnitude_squares sums them.
    const int64_t block = prec_.accumulate_block;
    const bool blocked = bound::blocked_accumulation(prec_, s.k);
    const double* ar = d.a.data() + (e * s.m + i) * s.k;
    const double* br = d.b.data() + (be * s.n + j) * s.k;
    const double* car = carries ? d.ca.data() + (e * s.m + i) * s.k : nullptr;
    const double* cbr = carries ? d.cb.data() + (be * s.n + j) * s.k : nullptr;
    double v = 0, sc = 0, cx = 0, cy = 0, sq = 0, part = 0, block_sq = 0;
    for (int64_t kk = 0; kk < s.k; ++kk) {
      const double x = ar[kk], y = br[kk];
      v += x * y;
      sc += std::fabs(x) * std::fabs(y);
      if (blocked) {
        part += std::fabs(x) * std::fabs(y);
        if ((kk + 1) % block == 0 || kk + 1 == s.k) block_sq += part * part, part = 0;
      }
      if (carries) {
        cx += car[kk] * (y * y + cbr[kk]);
        cy += x * x * cbr[kk];
      }
      if (tf32_operands) sq += (x * x) * (y * y);
    }
    v *= s.alpha;
    sc *= std::fabs(s.alpha);
    const double a2 = s.alpha * s.alpha;
    double var = carries ? cx * a2 + cy * std::fabs(a2) : 0.0;
    if (carries) var += ref::in_step_var(a2, d.lines_a, e * s.m + i, d.lines_b, be * s.n + j);  // as reference.cpp
    if (tf32_operands) var += bound::tf32_var(tf32_operands, sq * a2);
    var += bound::product_accumulation_var(prec_, s.k, sc, block_sq * a2);
    var += bound::coefficient_var(s.alpha, sc);
    const Act act = op.type == OpType::GEMM_BIAS_ACT ? op.attrs.act : Act::none;
    const bool has_bias = s.has_bias;
    const VS r = s.has_residual ? at(op.inputs.back(), l) : VS{};
    // As reference.cpp: the stored product, plus beta * R where there is a residual.
    if (prec_.product_rounded && (has_bias || act != Act::none))
      var += bound::single_rounding_var(dt, s.has_residual ? v + s.beta * r.value : v) +
             (s.has_residual ? bound::single_rounding_var(dt, v) : 0.0);
    if (has_bias) {
      const VS bias = at(op.inputs[2], j);
      v += bias.value;
      sc += bias.scale;
      const DType to = ref::bias_read_dtype(is_f8_product(g_, op), dt);  // as reference.cpp
      const bool converted = !ref::exact_cast(g_.tensor(op.inputs[2]).dtype, to);
      var += bias.carried() + (converted ? bound::single_rounding_var(to, bias.value) : 0.0);
    }
    if (s.has_residual) {
      v += s.beta * r.value;
      sc += std::fabs(s.beta) * r.scale;
      // As reference.cpp: a wider R is rounded to D's dtype before cuBLASLt reads it as C.
      const bool converted = !ref::exact_cast(g_.tensor(op.inputs.back()).dtype, dt);
      var += s.beta * s.beta * (r.carried() + (converted ? bound::single_rounding_var(dt, r.value) : 0.0)) +
             bound::coefficient_var(s.beta, std::fabs(s.beta) * r.scale);
    }
    var += bound::epilogue_var(int(has_bias) + int(s.has_residual), sc);  // as reference.cpp
    if (act == Act::relu) var = bound::relu_var(v, var), v = ref::relu(v);
    if (act == Act::gelu)
      var = var * ref::kGeluSlope * ref::kGeluSlope + bound::gelu_eval_var(v) + bound::approx_gelu_var(v, prec_.gelu_tanh_rel),
      v = ref::gelu_tanh(v), sc *= ref::kGeluSlope;
    if (act == Act::gelu_erf)  // as the GELU op of the erf form (ref_math.hpp)
      var = var * ref::kGeluSlope * ref::kGeluSlope + bound::gelu_eval_var(v) + bound::approx_gelu_var(v, prec_.gelu_tanh_rel),
      v = ref::gelu_erf(v), sc *= ref::kGeluSlope;
    if (act == Act::silu)  // as reference.cpp
      var = var * ref::kSiluSlope * ref::kSiluSlope + bound::gelu_eval_var(v), v = ref::silu(v), sc *= ref::kSiluSlope;
    const double out = ref::round_real(g_.tensor(op.outputs[0]), l, v);
    return {out, is_f8(dt) ? std::max(sc, std::fabs(out)) : sc, var, true, dt};
  }

  VS elementwise_at(const Op& op, int64_t l) const {
    const VS x = at(op.inputs[0], l);
    VS y;
    if (op.type == OpType::BIAS_ADD) y = at(op.inputs[1], l % g_.tensor(op.inputs[0]).shape.back());
    else if (op.inputs.size() > 1) y = at(op.inputs[1], l);
    else if (op.attrs.constant) y = ref::constant_elem(*op.attrs.constant);
    const DType y_dtype = op.inputs.size() > 1 ? g_.tensor(op.inputs[1]).dtype : op.attrs.constant ? DType::f32 : x.dtype;
    const Tensor& out = g_.tensor(op.outputs[0]);
    VS e = ref::elementwise(op.type, op.attrs.approximate, out.dtype, g_.tensor(op.inputs[0]).dtype, y_dtype, x, y,
                            prec_.gelu_tanh_rel, ref::scale_of(out, l));
    if (exact_casts_[size_t(&op - g_.ops.data())]) e.rounded = false;  // as reference.cpp
    return e;
  }

  // Output t of a FUSED_ELEMENTWISE group at element l.
  VS group_at(const Op& op, TensorId t, int64_t l) const {
    const int64_t n = g_.tensor(op.outputs[0]).numel(), cols = g_.tensor(op.outputs[0]).shape.back();
    std::vector<VS> vals;
    std::vector<DType> dtypes;
    for (TensorId in : op.inputs) {
      vals.push_back(at(in, g_.tensor(in).numel() == n ? l : l % cols));
      dtypes.push_back(g_.tensor(in).dtype);
    }
    ref::group_values(op.attrs, vals, dtypes, prec_.gelu_tanh_rel);
    for (size_t o = 0; o < op.outputs.size(); ++o)
      if (op.outputs[o] == t) return vals[size_t(op.attrs.results[o])];
    return {};
  }

  const Graph& g_;
  const GraphIndex& idx_;
  Precision prec_;
  std::vector<const std::vector<uint8_t>*> bytes_;
  std::vector<const RefTensor*> full_;
  std::vector<std::optional<GemmShape>> shape_;
  std::vector<std::unique_ptr<Dense>> dense_;
  std::vector<double> floor_;  // per tensor: its subnormal step where f8 (ref::Elem::ulp_floor)
  std::vector<char> exact_casts_;  // per op: a CAST whose codes every device reproduces (exact_codes.hpp)
};

// The same checks reference.cpp makes before it computes an op, so that both refuse the same graphs.
Status check_op_for_reference(const Graph& g, const Op& op, GemmShape* shape) {
  if (op.type == OpType::FUSED_ELEMENTWISE) {
    const auto problems = check_op(g, op);
    return problems.empty() ? Status{} : bad_input("FUSED_ELEMENTWISE does not check: " + problems[0]);
  }
  if (op.outputs.empty() || op.outputs.size() > 2 || op.inputs.empty())
    return bad_input("expected inputs and one output (and an amax)");
  const bool product = is_product(op);
  if ((product || is_binary_type(op.type)) && op.inputs.size() < 2 && !op.attrs.constant)
    return bad_input("expected two inputs");
  const Tensor& x = g.tensor(op.inputs[0]);
  const Tensor& y = g.tensor(op.outputs[0]);
  if (product) {
    std::string why;
    auto s = gemm_shape(g, op, &why);
    if (!s) return bad_input(why);
    const int64_t b_count = s->b_batched ? s->batch : 1;
    if (x.numel() != s->batch * s->m * s->k || g.tensor(op.inputs[1]).numel() != b_count * s->k * s->n)
      return bad_input("product operands do not match their geometry");
    if (s->has_residual && g.tensor(op.inputs.back()).numel() != s->batch * s->m * s->n)
      return bad_input("residual R does not match C's elements");
    if (s->has_bias && g.tensor(op.inputs[2]).numel() != s->n)
      return bad_input("bias length " + std::to_string(g.tensor(op.inputs[2]).numel()) + " differs from N=" +
                       std::to_string(s->n));
    if (y.numel() != s->batch * s->m * s->n) return bad_input("product output does not match its geometry");
    *shape = *s;
    return {};
  }
  if (x.numel() != y.numel()) return bad_input("output element count differs from the input's");
  switch (op.type) {
    case OpType::BIAS_ADD:
      if (x.shape.empty() || x.shape.back() == 0 || g.tensor(op.inputs[1]).numel() != x.shape.back())
        return bad_input("bias length differs from X's last dimension");
      return {};
    case OpType::ADD:
    case OpType::SUB:
    case OpType::MUL:
    case OpType::DIV:
      if (op.inputs.size() > 1 && g.tensor(op.inputs[1]).numel() != x.numel())
        return bad_input(std::string(op_type_name(op.type)) + " operands differ in element count");
      return {};
    default:  // the one-input elementwise ops
      if (is_group_step_type(op.type)) return {};
      return bad_input("not an elementwise op");
  }
}

// The graph cut down to the ops that `wanted` tensors depend on, with those as its outputs.
Graph upstream_of(const Graph& g, const std::vector<TensorId>& wanted) {
  std::vector<bool> need_tensor(g.tensors.size(), false), keep(g.ops.size(), false);
  for (TensorId t : wanted) need_tensor[size_t(t)] = true;
  for (size_t o = g.ops.size(); o-- > 0;) {
    const Op& op = g.ops[o];
    for (TensorId t : op.outputs) keep[o] = keep[o] || need_tensor[size_t(t)];
    if (keep[o])
      for (TensorId t : op.inputs) need_tensor[size_t(t)] = true;
  }
  Graph sub;
  sub.name = g.name;
  sub.seed = g.seed;
  sub.tensors = g.tensors;
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (keep[o]) sub.ops.push_back(g.ops[o]);
  sub.outputs = wanted;
  return sub;
}

}  // namespace

namespace {

// The tensor as a matrix: rows (all dimensions but the last, flattened) by columns (the last).
std::pair<int64_t, int64_t> matrix_of(const Tensor& t) {
  const int64_t cols = t.shape.empty() ? 1 : std::max<int64_t>(t.shape.back(), 1);
  return {std::max<int64_t>(t.numel() / cols, 1), cols};
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

TileShape tile_of(const Tensor& t, int64_t tile) {
  const auto [rows, cols] = matrix_of(t);
  TileShape s;
  s.rows = std::max<int64_t>(1, std::min(tile, rows));
  s.cols = std::max<int64_t>(1, std::min(cols, tile * tile / s.rows));
  return s;
}

int64_t sample_count(const Tensor& t, int64_t samples, int64_t tile) {
  const int64_t n = t.numel();
  if (n <= 0) return 0;
  const int64_t wanted = std::max<int64_t>(samples, 0);
  if (tile <= 0) return std::min(wanted, n);
  const auto [rows, cols] = matrix_of(t);
  const TileShape ts = tile_of(t, tile);
  return std::min(n, std::max(ceil_div(rows, ts.rows) * ceil_div(cols, ts.cols), wanted));
}

std::vector<int64_t> choose_samples(const Tensor& t, int64_t samples, uint64_t seed, int64_t tile) {
  const int64_t n = t.numel();
  const int64_t count = sample_count(t, samples, tile);
  std::vector<int64_t> logical;
  if (count >= n) {
    logical.resize(size_t(std::max<int64_t>(n, 0)));
    std::iota(logical.begin(), logical.end(), 0);
  } else if (count > 0) {
    const auto [rows, cols] = matrix_of(t);
    // The name joins the seed so that outputs of one shape are not sampled alike.
    std::mt19937_64 rng(seed ^ (std::hash<std::string>{}(t.name) * 0x9e3779b97f4a7c15ull));
    std::unordered_set<int64_t> picked;
    if (tile > 0) {
      // One element at a random place in every block: distinct, since the blocks do not overlap.
      const TileShape ts = tile_of(t, tile);
      for (int64_t r0 = 0; r0 < rows; r0 += ts.rows)
        for (int64_t c0 = 0; c0 < cols; c0 += ts.cols) {
          const int64_t r = r0 + std::uniform_int_distribution<int64_t>(0, std::min(ts.rows, rows - r0) - 1)(rng);
          const int64_t c = c0 + std::uniform_int_distribution<int64_t>(0, std::min(ts.cols, cols - c0) - 1)(rng);
          logical.push_back(r * cols + c);
        }
      if (count > int64_t(logical.size())) picked.insert(logical.begin(), logical.end());
    } else {
      const int64_t span = std::max(rows, cols);
      if (count >= span) {
        // Step d takes row d mod rows and column perm(d) mod cols: over `span` steps every row and
        // every column comes up, in an order the permutation shuffles.
        std::vector<int64_t> perm(static_cast<size_t>(span));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int64_t d = 0; d < span; ++d) picked.insert((d % rows) * cols + perm[size_t(d)] % cols);
      }
    }
    if (!picked.empty() || int64_t(logical.size()) < count) {
      std::uniform_int_distribution<int64_t> any(0, n - 1);
      while (static_cast<int64_t>(picked.size()) < count) picked.insert(any(rng));
      logical.assign(picked.begin(), picked.end());
    }
  }
  std::vector<int64_t> index(logical.size());
  for (size_t k = 0; k < logical.size(); ++k) index[k] = storage_of(t, logical[k]);
  std::sort(index.begin(), index.end());
  return index;
}

Result<std::map<std::string, SampledRef>> run_reference_sampled(
    const Graph& g, const std::map<std::string, std::vector<uint8_t>>& inputs, int64_t samples, uint64_t seed,
    const ProgressFn& progress, const Precision& prec, int64_t tile) {
  // Its strata do not hold the whole blocks a quantizing CAST takes S from (plan_check sends such
  // graphs to the full reference).
  if (has_block_scales(g)) return bad_input("block scales need the full reference; the sampled one does not take them");
  for (const Op& op : g.ops)
    if (op.type == OpType::GROUPED_GEMM)
      return bad_input("GROUPED_GEMM needs the full reference; the sampled one has no grouped products");
  const size_t count = g.tensors.size();
  const GraphIndex idx(g);
  ElementEval eval(g, idx, prec);

  // Which tensors are evaluated per element (walking back from the outputs through elementwise
  // ops and the last product), and which a product reads from another op: those are computed
  // in full, since a product needs whole rows and columns of its operands.
  std::vector<bool> seen(count, false);
  std::vector<TensorId> full, stack;
  std::vector<OpId> per_element_products;
  for (TensorId t : g.outputs) {
    if (t < 0 || size_t(t) >= count) return bad_input("output id " + std::to_string(t) + " out of range");
    stack.push_back(t);
  }
  while (!stack.empty()) {
    const TensorId t = stack.back();
    stack.pop_back();
    if (seen[size_t(t)]) continue;
    seen[size_t(t)] = true;
    const OpId p = idx.producer[size_t(t)];
    if (p == kNone) {
      const Tensor& tensor = g.tensor(t);
      auto it = inputs.find(tensor.name);
      if (it == inputs.end()) return bad_input("reference, no values for graph input \"" + tensor.name + "\"");
      if (static_cast<int64_t>(it->second.size()) != tensor.bytes())
        return bad_input("reference, input \"" + tensor.name + "\" has " + std::to_string(it->second.size()) +
                         " bytes, expected " + std::to_string(tensor.bytes()));
      eval.set_bytes(t, &it->second);
      continue;
    }
    const Op& op = g.ops[size_t(p)];
    // An amax covers every element of its op's result: it comes from the full reference of that op.
    if (op.outputs.size() > 1 && op.outputs[1] == t) {
      if (std::find(full.begin(), full.end(), t) == full.end()) full.push_back(t);
      continue;
    }
    for (TensorId in : op.inputs)
      if (in < 0 || size_t(in) >= count) return bad_input("reference, op " + op.name + ": tensor id out of range");
    GemmShape shape;
    if (Status s = check_op_for_reference(g, op, &shape); !s) return s.error().with("reference, op " + op.name);
    if (is_product(op)) eval.set_shape(p, shape), per_element_products.push_back(p);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const TensorId in = op.inputs[k];
      const bool operand = is_product(op) && k < 2;
      if (operand && idx.producer[size_t(in)] != kNone) {
        if (std::find(full.begin(), full.end(), in) == full.end()) full.push_back(in);
      } else {
        stack.push_back(in);
      }
    }
  }

  // The tensors needed whole, by the full reference of the graph above them.
  std::map<std::string, RefTensor> whole;
  if (!full.empty()) {
    const Graph sub = upstream_of(g, full);
    const double sub_work = reference_work(sub), all_work = sub_work + reference_work(g);
    ProgressFn part;
    if (progress && all_work > 0) part = [&](double d) { progress(d * sub_work / all_work); };
    auto r = run_reference(sub, inputs, part, prec);
    if (!r) return r.error();
    whole = std::move(*r);
    for (TensorId t : full) eval.set_full(t, &whole.at(g.tensor(t).name));
  }
  for (OpId p : per_element_products) eval.lay_out(p);

  std::map<std::string, SampledRef> out;
  for (TensorId t : g.outputs) {
    const Tensor& tensor = g.tensor(t);
    SampledRef s;
    s.index = choose_samples(tensor, samples, seed, tile);
    s.ref.value.resize(s.index.size());
    s.ref.scale.resize(s.index.size());
    s.ref.var.resize(s.index.size());
    // Storage index back to logical: the inverse of storage_of.
    auto logical_of = [&](int64_t st) {
      if (tensor.rank() != 2 || tensor.layout != Layout::colmajor) return st;
      const int64_t rows = tensor.shape[0], cols = tensor.shape[1];
      return (st % rows) * cols + st / rows;
    };
    const int64_t n = static_cast<int64_t>(s.index.size());
    auto work = [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const VS v = eval.at(t, logical_of(s.index[size_t(k)]));
        s.ref.value[size_t(k)] = v.value;
        s.ref.scale[size_t(k)] = v.scale;
        s.ref.var[size_t(k)] = v.var;
      }
    };
    const int64_t threads =
        std::min<int64_t>(n / 64 + 1, std::max<int64_t>(1, std::thread::hardware_concurrency()));
    if (threads <= 1) {
      work(0, n);
    } else {
      std::vector<std::thread> pool;
      const int64_t per = (n + threads - 1) / threads;
      for (int64_t q = 0; q < threads; ++q) {
        const int64_t k0 = q * per, k1 = std::min(n, k0 + per);
        if (k0 < k1) pool.emplace_back(work, k0, k1);
      }
      for (auto& th : pool) th.join();
    }
    if (n > 0) s.ref.rounded = eval.at(t, logical_of(s.index[0])).rounded;
    out[tensor.name] = std::move(s);
  }
  if (progress) progress(1.0);
  return out;
}

}  // namespace gexec
