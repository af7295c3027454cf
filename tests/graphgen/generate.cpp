// Random valid graphs, op by op: each op reads tensors made before it (the latest ones most often,
// so that chains form and cross dtypes) or new graph inputs, as graph-format.md allows.
#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/passes/pipeline.hpp"
#include "graphgen.hpp"

namespace gexec::graphgen {

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
int Rng::below(int n) { return n <= 1 ? 0 : int(next() % uint64_t(n)); }
int Rng::range(int lo, int hi) { return lo + below(hi - lo + 1); }
bool Rng::chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }

namespace {

constexpr DType kPlain[] = {DType::f16, DType::bf16, DType::f32};

class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& o) : r_(seed), o_(o) {}

  Graph run(uint64_t seed) {
    g_.name = "graphgen_" + std::to_string(seed);
    if (r_.chance(0.2)) g_.seed = r_.next() >> 1;
    const int ops = r_.range(1, std::max(1, o_.max_ops));
    for (int i = 0; i < ops; ++i) add_op();
    const int unused = r_.chance(0.25) ? r_.range(1, 2) : 0;
    for (int i = 0; i < unused; ++i) {
      const DType d = any_dtype();
      const auto s = shape(r_.range(1, 4));
      input(s, d, layout_for(s));
    }
    choose_outputs();
    return std::move(g_);
  }

 private:
  // Sizes: 1 often (one-element tensors, degenerate products), else anything up to max_dim.
  int64_t dim() { return r_.chance(0.15) ? 1 : r_.range(1, std::max(1, o_.max_dim)); }
  std::vector<int64_t> shape(int rank) {
    std::vector<int64_t> s;
    for (int i = 0; i < rank; ++i) s.push_back(dim());
    return s;
  }
  DType plain() { return kPlain[r_.below(3)]; }
  DType f8() { return r_.chance(0.5) ? DType::f8e4m3 : DType::f8e5m2; }
  DType any_dtype() { return r_.chance(0.3) ? f8() : plain(); }
  Layout layout_for(const std::vector<int64_t>& s) {
    return s.size() == 2 && r_.chance(0.25) ? Layout::colmajor : Layout::rowmajor;
  }
  double pick(std::initializer_list<double> v) { return *(v.begin() + r_.below(int(v.size()))); }

  // An f8 tensor's scale: the default, one value, or one per row or column (rank 2).
  Scale scale_for(const std::vector<int64_t>& s) {
    Scale sc;
    const int c = r_.below(10);
    if (c < 3) return sc;
    if (c < 6 || s.size() != 2) {
      sc.values = {pick({0.5, 0.25, 2.0, 0.0625, 0.3, 1.7, 0.01, 8.0})};
      return sc;
    }
    sc.axis = r_.below(2);
    sc.values.clear();
    for (int64_t i = 0; i < s[size_t(sc.axis)]; ++i) sc.values.push_back(pick({0.5, 1.0, 0.125, 0.07, 1.3, 3.0}));
    return sc;
  }

  std::optional<Init> init_for(const Tensor& t) {
    Init in;
    switch (r_.below(9)) {
      case 0:
      case 1: return std::nullopt;  // normal(0, 1)
      case 2:
        in.kind = InitKind::normal, in.mean = pick({0.0, 0.5, -1.0}), in.std = pick({0.1, 0.5, 1.0, 2.0});
        break;
      case 3: {
        in.kind = InitKind::uniform;
        const int w = r_.below(4);
        in.low = std::array{-1.0, 0.0, -3.0, 0.25}[size_t(w)];
        in.high = std::array{1.0, 2.0, -1.0, 0.5}[size_t(w)];
        break;
      }
      case 4: in.kind = r_.chance(0.5) ? InitKind::zeros : InitKind::ones; break;
      case 5:
      case 6:
        if (t.numel() <= 256) {
          in.kind = InitKind::values;
          for (int64_t i = 0; i < t.numel(); ++i)
            in.values.edit().push_back(r_.chance(0.1) ? pick({0.0, 1e-3, -0.1, 100.0, 3.14159, 3e-6, -1e-7, 1e-40}) : r_.range(-8, 8) * 0.25);
          break;
        }
        return std::nullopt;
      default: in.kind = InitKind::normal; break;
    }
    return in;
  }

  TensorId new_tensor(const std::vector<int64_t>& s, DType d, Layout l) {
    Tensor t;
    t.name = std::string("t").append(std::to_string(g_.tensors.size()));  // not "t" + ...: GCC 12 -Wrestrict
    t.shape = s;
    t.dtype = d;
    t.layout = s.size() == 2 ? l : Layout::rowmajor;
    if (is_f8(d)) t.scale = scale_for(s);
    return g_.add_tensor(std::move(t));
  }
  // A graph input: some init (or none), sometimes constant; readable by later ops.
  TensorId input(const std::vector<int64_t>& s, DType d, Layout l) {
    const TensorId id = new_tensor(s, d, l);
    g_.tensor(id).init = init_for(g_.tensor(id));
    g_.tensor(id).constant = r_.chance(0.2);
    pool_.push_back(id);
    return id;
  }
  // A tensor an op writes; readable by the ops after it.
  TensorId result(const std::vector<int64_t>& s, DType d, Layout l) {
    const TensorId id = new_tensor(s, d, l);
    made_.push_back(id);
    return id;
  }
  TensorId amax() { return result({1}, DType::f32, Layout::rowmajor); }

  // A tensor made before for which `ok` holds, the latest most often; kNone when none is, or with
  // probability 1 - p (a new input then).
  TensorId reuse(const std::function<bool(const Tensor&)>& ok, double p = 0.75) {
    if (!r_.chance(p)) return kNone;
    std::vector<TensorId> fit;
    for (TensorId t : pool_)
      if (ok(g_.tensor(t))) fit.push_back(t);
    if (fit.empty()) return kNone;
    return r_.chance(0.5) ? fit.back() : fit[size_t(r_.below(int(fit.size())))];
  }

  Op& op(OpType type, std::vector<TensorId> in, std::vector<TensorId> out) {
    Op o;
    o.name = std::string(op_type_name(type)) + "_" + std::to_string(g_.ops.size());
    o.type = type;
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    g_.ops.push_back(std::move(o));
    for (TensorId t : made_) pool_.push_back(t);
    made_.clear();
    return g_.ops.back();
  }

  void add_op() {
    const int c = r_.below(100);
    if (c < 15) return product(OpType::MATMUL);
    if (c < 30) return product(OpType::GEMM_BIAS_ACT);
    if (c < 45) return cast();
    if (c < 50) return binary(OpType::ADD);
    if (c < 54) return binary(OpType::SUB);
    if (c < 59) return binary(OpType::MUL);
    if (c < 62) return divide();
    if (c < 67) return bias_add();
    if (c < 72) return unary(OpType::RELU);
    if (c < 77) return unary(OpType::GELU);
    if (c < 81) return unary(OpType::SILU);
    if (c < 88) return unary(std::array{OpType::SIGMOID, OpType::TANH, OpType::ERF}[size_t(r_.below(3))]);
    if (c < 92) return power();
    if (c < 94) return block_product();
    if (c < 97) return grouped();
    return group();
  }

  static bool not_f8(const Tensor& t) { return !is_f8(t.dtype); }

  TensorId plain_operand() {
    TensorId x = reuse(not_f8);
    if (x == kNone) {
      const auto s = shape(r_.range(1, 4));
      x = input(s, plain(), layout_for(s));
    }
    return x;
  }

  void unary(OpType type) {
    const TensorId x = plain_operand();
    const auto s = g_.tensor(x).shape;
    Op& o = op(type, {x}, {result(s, plain(), layout_for(s))});
    if (type == OpType::GELU && r_.chance(0.4)) o.attrs.approximate = GeluApprox::none;
  }

  // A constant operand of ADD, SUB, MUL, DIV (never 0: DIV's).
  double scalar() { return pick({2.0, -0.5, 0.1, 3.0, -1.25, 1e-3, 7.0}); }

  void binary(OpType type) {
    const TensorId x = plain_operand();
    const auto s = g_.tensor(x).shape;
    if (r_.chance(0.25)) {
      op(type, {x}, {result(s, plain(), layout_for(s))}).attrs.constant = scalar();
      return;
    }
    TensorId y = reuse([&](const Tensor& t) { return not_f8(t) && t.shape == s; }, 0.6);
    if (y == kNone) y = input(s, plain(), layout_for(s));
    op(type, {x, y}, {result(s, plain(), layout_for(s))});
  }

  // DIV by a constant, or by a new input kept away from 0 (a divisor that a computed value's error
  // may bring to 0 has no bound: ref_math.hpp).
  void divide() {
    const TensorId x = plain_operand();
    const auto s = g_.tensor(x).shape;
    if (r_.chance(0.4)) {
      op(OpType::DIV, {x}, {result(s, plain(), layout_for(s))}).attrs.constant = scalar();
      return;
    }
    const TensorId y = new_tensor(s, plain(), layout_for(s));
    Init in;
    in.kind = InitKind::uniform;
    const bool negative = r_.chance(0.3);
    in.low = negative ? -2.0 : 0.5, in.high = negative ? -0.5 : 2.0;
    g_.tensor(y).init = in;
    pool_.push_back(y);
    op(OpType::DIV, {x, y}, {result(s, plain(), layout_for(s))});
  }

  // POW by an integer exponent of any value, or by a fractional or negative one of a new input
  // (whose error is 0: near 0 those have no bound where an error reaches it; a negative base
  // gives NaN, in the reference and the kernels alike).
  void power() {
    if (r_.chance(0.5)) {
      const TensorId x = plain_operand();
      const auto s = g_.tensor(x).shape;
      op(OpType::POW, {x}, {result(s, plain(), layout_for(s))}).attrs.constant = pick({2.0, 3.0, 1.0, 0.0});
      return;
    }
    const auto s = shape(r_.range(1, 4));
    const TensorId x = input(s, plain(), layout_for(s));
    op(OpType::POW, {x}, {result(s, plain(), layout_for(s))}).attrs.constant = pick({0.5, 1.5, -1.0, -2.0, 0.3333});
  }

  TensorId bias(int64_t n) {
    TensorId b = reuse([&](const Tensor& t) { return not_f8(t) && t.shape == std::vector<int64_t>{n}; }, 0.5);
    return b != kNone ? b : input({n}, plain(), Layout::rowmajor);
  }

  void bias_add() {
    const TensorId x = plain_operand();
    const auto s = g_.tensor(x).shape;
    const TensorId b = bias(s.back());
    op(OpType::BIAS_ADD, {x, b}, {result(s, plain(), layout_for(s))});
  }

  // Any dtype to any dtype (f8 to f8 requantizes); an f8 result may take an amax output.
  void cast() {
    TensorId x = reuse([](const Tensor&) { return true; });
    if (x == kNone) {
      const auto s = shape(r_.range(1, 4));
      x = input(s, any_dtype(), layout_for(s));
    }
    const auto s = g_.tensor(x).shape;
    const DType from = g_.tensor(x).dtype;
    DType to = any_dtype();
    if (is_f8(from) && r_.chance(0.6)) to = plain();  // dequantize, mostly
    else if (!is_f8(from) && r_.chance(0.4)) to = f8();  // quantize, often
    std::vector<TensorId> out = {result(s, to, layout_for(s))};
    if (is_f8(to) && s.size() == 2 && r_.chance(0.3)) {
      // Quantized on the fly with blocks of any size (partial ones at the edges): S as the second output.
      out.push_back(block_scale(out[0], {r_.range(1, 4), r_.range(1, 4)}, true));
    } else if (is_f8(to) && r_.chance(0.4)) {
      out.push_back(amax());
    }
    op(OpType::CAST, {x}, out);
  }

  // Gives t a block scale whose S is a new tensor: the result of the op being built (computed),
  // or a graph input drawn positive. Returns S.
  TensorId block_scale(TensorId t, std::array<int64_t, 2> block, bool computed) {
    Tensor& x = g_.tensor(t);
    x.scale = Scale{};
    x.scale.values.clear();
    x.scale.block = block;
    const std::vector<int64_t> shape = block_scale_shape(x);
    const TensorId s = computed ? result(shape, DType::f32, Layout::rowmajor) : new_tensor(shape, DType::f32, Layout::rowmajor);
    if (!computed) {
      Init in;
      in.kind = InitKind::uniform, in.low = pick({0.01, 0.25, 1e-3}), in.high = in.low * 2;
      g_.tensor(s).init = in;
      g_.tensor(s).constant = g_.tensor(t).constant;
      pool_.push_back(s);
    }
    g_.tensor(t).scale.tensor = s;
    return s;
  }

  // A block-scaled product, the DeepSeek-V3 recipe: X quantized on the fly (1 x 128 along K, or
  // 128 x 128), W an f8 weight with a given S or quantized too; C f16, bf16 or f32.
  void block_product() {
    const bool ta = r_.chance(0.25), tb = r_.chance(0.25);
    const int64_t m = dim(), n = dim(), k = r_.chance(0.5) ? r_.range(1, 300) : dim();
    const DType da = f8(), db = da == DType::f8e5m2 ? DType::f8e4m3 : f8();
    auto k_block = [&](bool k_is_column) {
      if (r_.chance(0.3)) return std::array<int64_t, 2>{128, 128};
      return k_is_column ? std::array<int64_t, 2>{1, 128} : std::array<int64_t, 2>{128, 1};
    };
    const std::vector<int64_t> sa = ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
    const std::vector<int64_t> sb = tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    const TensorId x = input(sa, plain(), layout_for(sa));
    const TensorId a = result(sa, da, layout_for(sa));
    const TensorId s_a = block_scale(a, k_block(!ta), true);
    op(OpType::CAST, {x}, {a, s_a});
    TensorId b = kNone;
    if (r_.chance(0.5)) {
      b = input(sb, db, layout_for(sb));
      block_scale(b, k_block(tb), false);
    } else {
      const TensorId w = input(sb, plain(), layout_for(sb));
      b = result(sb, db, layout_for(sb));
      const TensorId s_b = block_scale(b, k_block(tb), true);
      op(OpType::CAST, {w}, {b, s_b});
    }
    const OpType type = r_.chance(0.5) ? OpType::MATMUL : OpType::GEMM_BIAS_ACT;
    std::vector<TensorId> in = {a, b};
    Attrs at;
    at.trans_a = ta, at.trans_b = tb;
    if (r_.chance(0.3)) at.alpha = pick({0.5, -1.0, 2.0});
    if (r_.chance(0.5)) at.fast_accum = true;
    if (type == OpType::GEMM_BIAS_ACT) {
      if (r_.chance(0.6)) in.push_back(bias(n));
      at.act = std::array{Act::none, Act::relu, Act::gelu}[size_t(r_.below(3))];
    }
    op(type, std::move(in), {result({m, n}, plain(), layout_for({m, n}))}).attrs = at;
  }

  // MATMUL or GEMM_BIAS_ACT: f8 or not, batched (B shared or not), transposed, colmajor rank-2
  // operands, alpha; GEMM_BIAS_ACT adds bias, activation, residual with beta, mnk.
  void product(OpType type) {
    const bool f8_op = r_.chance(0.4);
    const bool ta = r_.chance(0.25), tb = r_.chance(0.25);
    auto operand_ok = [&](const Tensor& t) {
      return is_f8(t.dtype) == f8_op && !t.scale.is_block() &&
             (t.rank() == 2 || (t.rank() == 3 && t.layout == Layout::rowmajor));
    };
    auto rows = [](const std::vector<int64_t>& s) { return s[s.size() - 2]; };
    auto cols = [](const std::vector<int64_t>& s) { return s[s.size() - 1]; };
    auto mat = [&](int64_t batch, int64_t r, int64_t c) {
      return batch > 0 ? std::vector<int64_t>{batch, r, c} : std::vector<int64_t>{r, c};
    };

    TensorId a = reuse(operand_ok);
    int64_t batch = 0, m = 0, k = 0;
    if (a != kNone) {
      const auto& s = g_.tensor(a).shape;
      batch = s.size() == 3 ? s[0] : 0;
      m = ta ? cols(s) : rows(s);
      k = ta ? rows(s) : cols(s);
    } else {
      batch = r_.chance(0.2) ? r_.range(1, 3) : 0;
      m = dim(), k = r_.chance(0.15) ? r_.range(1, 8 * std::max(1, o_.max_dim)) : dim();  // long sums now and then
      const auto s = ta ? mat(batch, k, m) : mat(batch, m, k);
      a = input(s, f8_op ? f8() : plain(), layout_for(s));
    }
    const DType da = g_.tensor(a).dtype;
    const bool b_batched = batch > 0 && r_.chance(0.6);
    auto b_ok = [&](const Tensor& t) {
      if (!operand_ok(t) || (b_batched ? t.rank() != 3 || t.shape[0] != batch : t.rank() != 2)) return false;
      if (da == DType::f8e5m2 && t.dtype == DType::f8e5m2) return false;
      return (tb ? cols(t.shape) : rows(t.shape)) == k;
    };
    TensorId b = reuse(b_ok, 0.6);
    int64_t n = 0;
    if (b != kNone) {
      n = tb ? rows(g_.tensor(b).shape) : cols(g_.tensor(b).shape);
    } else {
      n = dim();
      DType db = f8_op ? f8() : r_.chance(0.6) ? da : plain();
      if (da == DType::f8e5m2) db = DType::f8e4m3;
      const auto s = tb ? mat(b_batched ? batch : 0, n, k) : mat(b_batched ? batch : 0, k, n);
      b = input(s, db, layout_for(s));
    }
    const DType db = g_.tensor(b).dtype;

    DType dc = plain();
    if (f8_op && r_.chance(0.45)) dc = da == DType::f8e5m2 || db == DType::f8e5m2 ? f8() : DType::f8e4m3;
    const auto cs = mat(batch, m, n);
    std::vector<TensorId> in = {a, b};
    std::vector<TensorId> out = {result(cs, dc, layout_for(cs))};
    if (is_f8(dc) && r_.chance(0.4)) out.push_back(amax());

    Attrs at;
    at.trans_a = ta, at.trans_b = tb;
    if (r_.chance(0.35)) at.alpha = pick({0.5, -1.0, 2.0, 0.25, 1.5, -0.3, 1e-3});
    if (f8_op && r_.chance(0.5)) at.fast_accum = true;
    if (type == OpType::GEMM_BIAS_ACT) {
      if (r_.chance(0.6)) in.push_back(bias(n));
      // SiLU on the f16/bf16/f32 products: cuBLASLt's FP8 product has no epilogue for it.
      at.act = std::array{Act::none, Act::relu, Act::gelu, Act::silu}[size_t(r_.below(f8_op ? 3 : 4))];
      if (r_.chance(0.4)) {
        at.residual = true;
        TensorId res = reuse([&](const Tensor& t) { return not_f8(t) && t.shape == cs; }, 0.5);
        if (res == kNone) res = input(cs, plain(), layout_for(cs));
        in.push_back(res);
        if (r_.chance(0.5)) at.beta = pick({0.5, -1.0, 2.0, 0.0});
      }
      if (r_.chance(0.4)) at.mnk = std::array<int64_t, 3>{m, n, k};
    }
    op(type, std::move(in), std::move(out)).attrs = at;
  }

  // A GROUPED_GEMM: X [T, K] made before or a new input, 1 to 4 groups with sorted offsets (empty
  // groups and rows no group owns among them), W of X's dtype stored either way, maybe a bias; or
  // block-scaled f8 X (1 x 128) and W (128 x 128 per expert), their S given.
  // The offsets are not put in the pool: no other op may read an i32 tensor.
  void grouped() {
    const bool blocks = r_.chance(0.2);
    TensorId x = blocks ? kNone : reuse([](const Tensor& t) {
      return !is_f8(t.dtype) && t.dtype != DType::i32 && t.rank() == 2 && t.layout == Layout::rowmajor;
    });
    if (x == kNone) x = input({dim(), blocks ? r_.range(1, 300) : dim()}, blocks ? f8() : plain(), Layout::rowmajor);
    const int64_t tokens = g_.tensor(x).shape[0], k = g_.tensor(x).shape[1], n = dim();
    const int64_t groups = r_.range(1, 4);
    const bool tb = r_.chance(0.5);
    const DType wt = !blocks ? g_.tensor(x).dtype : g_.tensor(x).dtype == DType::f8e5m2 ? DType::f8e4m3 : f8();
    const TensorId w = input(tb ? std::vector<int64_t>{groups, n, k} : std::vector<int64_t>{groups, k, n}, wt,
                             Layout::rowmajor);
    if (blocks) {
      block_scale(x, {1, 128}, false), block_scale(w, {128, 128}, false);
      pool_.erase(std::remove(pool_.begin(), pool_.end(), w), pool_.end());  // no CAST reads rank-3 blocks
    }
    const TensorId off = new_tensor({groups}, DType::i32, Layout::rowmajor);
    std::vector<double> ends;
    for (int64_t e = 0; e < groups; ++e) ends.push_back(r_.range(0, int(tokens)));
    std::sort(ends.begin(), ends.end());
    if (r_.chance(0.5)) ends.back() = double(tokens);  // every row owned, often
    Init init;
    init.kind = InitKind::values;
    init.values = SharedValues(ends);
    g_.tensor(off).init = init;
    std::vector<TensorId> in = {x, w, off};
    if (r_.chance(0.4)) in.push_back(input({groups, n}, plain(), Layout::rowmajor));
    Attrs at;
    at.trans_b = tb;
    at.act = std::array{Act::none, Act::relu, Act::gelu, Act::silu}[size_t(r_.below(4))];
    if (r_.chance(0.3)) at.alpha = pick({0.5, -1.0, 2.0});
    op(OpType::GROUPED_GEMM, std::move(in), {result({tokens, n}, plain(), Layout::rowmajor)}).attrs = at;
  }

  // A hand-written FUSED_ELEMENTWISE: full-shape inputs and perhaps a bias vector, 1 to 6 steps,
  // 1 to 3 results (the last step among them); row-major tensors, f16/bf16/f32 only.
  void group() {
    auto rowmajor = [](const Tensor& t) { return t.rank() != 2 || t.layout == Layout::rowmajor; };
    TensorId first = reuse([&](const Tensor& t) { return not_f8(t) && rowmajor(t); });
    if (first == kNone) first = input(shape(r_.range(1, 4)), plain(), Layout::rowmajor);
    const auto s = g_.tensor(first).shape;
    std::vector<TensorId> in = {first};
    std::vector<int> full = {0}, biases;
    const int more = r_.range(0, 2);
    for (int i = 0; i < more; ++i) {
      TensorId x = reuse([&](const Tensor& t) { return not_f8(t) && rowmajor(t) && t.shape == s; }, 0.5);
      if (x == kNone) x = input(s, plain(), Layout::rowmajor);
      full.push_back(int(in.size()));
      in.push_back(x);
    }
    if (r_.chance(0.4)) {
      biases.push_back(int(in.size()));
      in.push_back(bias(s.back()));
    }
    if (s.size() == 1) biases.insert(biases.end(), full.begin(), full.end());  // a full value serves as a bias
    const int nin = int(in.size());
    Attrs at;
    const int steps = r_.range(1, 6);
    for (int i = 0; i < steps; ++i) {
      GroupStep st;
      const int c = r_.below(13);
      st.type = std::array{OpType::ADD,     OpType::MUL,  OpType::BIAS_ADD, OpType::RELU, OpType::GELU,
                           OpType::SILU,    OpType::CAST, OpType::SUB,      OpType::DIV,  OpType::SIGMOID,
                           OpType::TANH,    OpType::ERF,  OpType::POW}[size_t(c)];
      if (st.type == OpType::BIAS_ADD && biases.empty()) st.type = OpType::ADD;
      auto any_full = [&] { return full[size_t(r_.chance(0.5) ? full.size() - 1 : size_t(r_.below(int(full.size()))))]; };
      st.args.push_back(any_full());
      // DIV by a constant only, POW by an integer (as divide() and power() say why).
      if (st.type == OpType::DIV || (is_binary_type(st.type) && st.type != OpType::BIAS_ADD && r_.chance(0.25)))
        st.constant = scalar();
      if (st.type == OpType::POW) st.constant = pick({2.0, 3.0});
      if (operand_count(st.type, st.constant.has_value()) == 2 && st.type != OpType::BIAS_ADD) st.args.push_back(any_full());
      if (st.type == OpType::BIAS_ADD) st.args.push_back(biases[size_t(r_.below(int(biases.size())))]);
      if (st.type == OpType::GELU && r_.chance(0.4)) st.approximate = GeluApprox::none;
      st.dtype = plain();
      full.push_back(nin + i);
      if (s.size() == 1) biases.push_back(nin + i);
      at.steps.push_back(st);
    }
    std::vector<int32_t> results = {nin + steps - 1};
    const int extra = r_.range(0, std::min(2, steps - 1));
    for (int i = 0; i < extra; ++i) {
      const int32_t v = nin + r_.below(steps - 1);
      if (std::find(results.begin(), results.end(), v) == results.end()) results.push_back(v);
    }
    if (r_.chance(0.5)) std::reverse(results.begin(), results.end());
    std::vector<TensorId> out;
    for (int32_t v : results) out.push_back(result(s, at.steps[size_t(v - nin)].dtype, Layout::rowmajor));
    at.results = results;
    op(OpType::FUSED_ELEMENTWISE, std::move(in), std::move(out)).attrs = at;
  }

  // Every result no op reads (the format's default), some that are read (intermediates kept).
  void choose_outputs() {
    const GraphIndex idx(g_);
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      if (idx.producer[t] == kNone) continue;
      if (idx.consumers[t].empty() || r_.chance(0.25)) g_.outputs.push_back(TensorId(t));
    }
    // The S of a block-scaled output is an output too, as the loader makes it.
    for (size_t i = 0, n = g_.outputs.size(); i < n; ++i) {
      const Scale& sc = g_.tensor(g_.outputs[i]).scale;
      if (sc.is_block() && idx.producer[size_t(sc.tensor)] != kNone &&
          std::find(g_.outputs.begin(), g_.outputs.end(), sc.tensor) == g_.outputs.end())
        g_.outputs.push_back(sc.tensor);
    }
    if (r_.chance(0.3)) std::reverse(g_.outputs.begin(), g_.outputs.end());
  }

  Rng r_;
  const GenOptions& o_;
  Graph g_;
  std::vector<TensorId> pool_;  // tensors that ops may read: inputs and earlier ops' results
  std::vector<TensorId> made_;  // results of the op being built
};

}  // namespace

Graph generate_graph(uint64_t seed, const GenOptions& opts) { return Gen(seed, opts).run(seed); }

std::string RunSpec::args() const {
  std::string s = "--backend " + backend + " --passes " + passes;
  if (tp > 0) s += " --tp " + std::to_string(tp) + (reduce_scatter ? " --tp-reduce reduce-scatter" : "");
  if (verify != "auto") s += " --verify " + verify;
  if (verify == "sample") s += " --samples " + std::to_string(samples);
  if (emit.empty()) return s;
  return "--passes " + emit + " --emit-graph E.json --dry-run, then gexec run E.json " + s;
}

std::vector<RunSpec> random_runs(uint64_t seed) {
  Rng r(seed ^ 0x5bd1e995a1b2c3d4ull);
  auto pass_list = [&r] {
    if (r.chance(0.1)) return std::string("none");
    const auto& all = all_passes();
    std::string list;
    const int n = r.range(1, 6);
    for (int i = 0; i < n; ++i) list += (i ? "," : "") + all[size_t(r.below(int(all.size())))].name;
    return list;
  };
  RunSpec listed;
  listed.passes = pass_list();
  const int c = r.below(10);
  if (c < 3) listed.verify = "sample", listed.samples = r.range(1, 40);
  else if (c < 5) listed.verify = "exact";
  RunSpec emitted;
  emitted.emit = pass_list();
  emitted.passes = r.chance(0.5) ? "none" : "default";
  // The graph cut for 2 to 4 ranks (--tp), checked against its unsharded reference.
  RunSpec sharded;
  sharded.tp = r.range(2, 4);
  sharded.reduce_scatter = r.chance(0.5);
  return {RunSpec{}, listed, emitted, sharded};
}

}  // namespace gexec::graphgen
