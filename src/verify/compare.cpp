// Comparing an output with the reference: error statistics, the per-element and the normwise rule.
#include "gexec/verify/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "gexec/ir/real_value.hpp"
#include "gexec/verify/bound.hpp"
#include "parallel.hpp"

namespace gexec {

// The rounding model (bound.hpp) carries what a correct kernel may differ by; atol only covers
// results near zero: a cancellation whose rounding errors the reference's magnitudes do not see
// (a few ulps of a small value, far below the other terms for any output of typical size).
Tolerance default_tolerance(DType output) {
  switch (output) {
    case DType::f32: return {1e-6, 0.0};
    case DType::f16: return {1e-5, 0.0};
    case DType::bf16: return {1e-4, 0.0};
    // f8: one step of the subnormal grid, in stored units (output_tolerance multiplies it by the
    // tensor's largest scale).
    case DType::f8e4m3: return {0x1p-9, 0.0};
    case DType::f8e5m2: return {0x1p-16, 0.0};
    case DType::i32: return {0.0, 0.0};
  }
  return {};
}

double element_bound(DType dt, const RefTensor& ref, size_t i, const Tolerance& tol) {
  if (tol.exact) return 0.0;
  const double rounding = ref.rounded || ref.var[i] != 0 ? bound::kOutputUlps * ulp_of(dt, ref.value[i]) : 0.0;
  // rtol (0 unless asked for) times the scale: not 0 times an infinite scale, which is NaN (a
  // RELU of -inf is 0 exactly, its scale infinite).
  const double relative = tol.rtol > 0 ? tol.rtol * ref.scale[i] : 0.0;
  return tol.atol + relative + rounding + bound::kTail * std::sqrt(bound::known_var(ref.var[i]));
}

double element_norm_var(DType dt, const RefTensor& ref, size_t i, double ulp_floor) {
  // Both the reference and the device round (output_rounding_var's ulp^2 / 6), on the grid's
  // real spacing: near 0 an f8 output's is its subnormal step, which ulp_of leaves to atol, so
  // that outputs of a few tiny elements, one a step off, failed the normwise rule alone.
  return ref.var[i] + (ref.rounded ? bound::output_rounding_var(dt, ref.value[i], ulp_floor) : 0.0);
}

double subnormal_step(const Tensor& t) { return is_f8(t.dtype) ? output_tolerance(t).atol : 0.0; }

namespace {

// The statistics of a stretch of elements, merged in order into the whole.
struct Partial {
  double err2 = 0, ref2 = 0, var = 0, var2 = 0, max_abs = 0, max_rel = 0, max_ratio = -1;
  int64_t beyond = 0, got_nonfinite = 0, ref_nonfinite = 0, unbounded = 0;
  int64_t worst = -1;
  double worst_got = 0, worst_ref = 0, worst_bound = 0;
  void merge(const Partial& o) {
    err2 += o.err2, ref2 += o.ref2, var += o.var, var2 += o.var2;
    max_abs = std::max(max_abs, o.max_abs), max_rel = std::max(max_rel, o.max_rel);
    beyond += o.beyond, got_nonfinite += o.got_nonfinite, ref_nonfinite += o.ref_nonfinite, unbounded += o.unbounded;
    if (o.max_ratio > max_ratio) {  // the first of equal ratios stays the worst
      max_ratio = o.max_ratio;
      worst = o.worst, worst_got = o.worst_got, worst_ref = o.worst_ref, worst_bound = o.worst_bound;
    }
  }
};

// Elements whose references are equal are often one computation on the same values (an output of
// `ones`, a broadcast bias, a repeated row), whose errors are then one error, not independent
// ones: 16 equal elements each a rounding step off failed the normwise rule of 16 independent
// elements. This estimates, for N_eff (bound::effective_count), the sum of w_i w_j over pairs
// i != j of equal finite references, w the elements' normwise variances: exactly from all of an
// output of up to kPairSample elements, else from a fixed pseudo-random sample of that many,
// scaled to all pairs. Elements of tiny variance (RELU's exact zeros) weigh nothing.
constexpr int64_t kPairSample = 4096;
std::vector<int64_t> pair_positions(int64_t n) {
  std::vector<int64_t> at;
  if (n <= kPairSample) {
    at.resize(size_t(n));
    for (int64_t k = 0; k < n; ++k) at[size_t(k)] = k;
  } else {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t j = 0; j < kPairSample; ++j) {  // splitmix64: positions with no stride to alias
      uint64_t z = (x += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      at.push_back(int64_t((z ^ (z >> 31)) % uint64_t(n)));
    }
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
  }
  return at;
}

// Appends (reference, its variance) of element k of `ref` where both are finite.
void add_pair(DType dt, const RefTensor& ref, size_t k, double ulp_floor, std::vector<std::pair<double, double>>& vw) {
  const double r = ref.value[k], w = element_norm_var(dt, ref, k, ulp_floor);
  if (std::isfinite(r) && std::isfinite(w)) vw.emplace_back(r, w);
}

// The estimate from the pairs found at `m` positions of n.
double pairs_of(std::vector<std::pair<double, double>> vw, int64_t n, size_t m_positions) {
  std::sort(vw.begin(), vw.end());
  double pairs = 0;
  for (size_t i = 0; i < vw.size();) {
    size_t j = i;
    double sum = 0, sq = 0;
    for (; j < vw.size() && vw[j].first == vw[i].first; ++j) sum += vw[j].second, sq += vw[j].second * vw[j].second;
    pairs += sum * sum - sq;
    i = j;
  }
  const double m = double(m_positions);
  return m > 1 ? pairs * (double(n) * double(n - 1)) / (m * (m - 1)) : 0.0;
}

double equal_value_pairs(DType dt, const RefTensor& ref, int64_t n, double ulp_floor) {
  const std::vector<int64_t> at = pair_positions(n);
  std::vector<std::pair<double, double>> vw;  // (reference, its variance)
  for (int64_t k : at) add_pair(dt, ref, size_t(k), ulp_floor, vw);
  return pairs_of(std::move(vw), n, at.size());
}

// The statistics over elements at(k), k < n, of t: element k is stored at index(k) in `got`
// and its reference is ref.value[k], ref.scale[k], ref.var[k]. Stretches of elements run on the
// machine's threads; their sums are merged in a fixed order, so the result has the same bits on
// any number of threads.
template <typename Index>
void partials(const OutputCheck& c, const Tensor& t, const void* got, const RefTensor& ref, int64_t n, Index index,
              std::vector<Partial>& parts) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tolerance tol = c.tol;
  const double ulp_floor = subnormal_step(t);
  parts.resize(size_t(std::max<int64_t>(1, (n + ref::kChunk - 1) / ref::kChunk)));
  ref::for_chunks(n, ref::kChunk, [&](int64_t chunk, int64_t k0, int64_t k1) {
    // Kept here and stored once: neighbouring chunks' partials share cache lines (false sharing).
    Partial p;
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t i = index(k);
      const double g = load_real(got, t, i), r = ref.value[size_t(k)];
      const double bound = element_bound(t.dtype, ref, size_t(k), tol);
      // A non-finite reference (from non-finite inputs, or an overflow the graph as written has) is
      // matched only by the same value: NaN by NaN, an infinity by itself. Such a pair has no error;
      // any other non-finite value on either side never matches. (Outputs are poisoned with NaN, so
      // an unwritten element passes only where the right answer is NaN itself.)
      if (!std::isfinite(r) && (std::isnan(r) ? std::isnan(g) : g == r)) continue;
      // A finite reference that no finite bound covers (a divisor, or a POW base under a
      // fractional exponent, whose error can reach 0: ref_math.hpp; an infinite operand whose
      // terms leave a NaN variance: bound::known_var) vouches for no value there:
      // any result may be right, so the element is counted as unbounded and not compared.
      if (std::isfinite(r) && std::isinf(bound)) {
        ++p.unbounded;
        continue;
      }
      p.got_nonfinite += !std::isfinite(g);
      p.ref_nonfinite += !std::isfinite(r);
      const bool finite = std::isfinite(g) && std::isfinite(r) && std::isfinite(bound);
      const double err = finite ? std::fabs(g - r) : inf;
      const bool over = !finite || err > bound;
      if (over) ++p.beyond;
      p.max_abs = std::max(p.max_abs, err);
      if (r != 0 && std::isfinite(r)) p.max_rel = std::max(p.max_rel, err / std::fabs(r));
      if (finite) {
        p.err2 += err * err;
        p.ref2 += r * r;
      }
      if (!tol.exact) {
        const double v = element_norm_var(t.dtype, ref, size_t(k), ulp_floor);
        p.var += v;
        p.var2 += v * v;
      }
      const double ratio = !finite ? inf : bound > 0 ? err / bound : (err > 0 ? inf : 0.0);
      if (ratio > p.max_ratio) {
        p.max_ratio = ratio;
        p.worst = i;
        p.worst_got = g;
        p.worst_ref = r;
        p.worst_bound = bound;
      }
    }
    parts[size_t(chunk)] = p;
  });
}

// The check's figures from the partials of its n elements, merged in order, and the equal pairs.
void conclude(OutputCheck& c, const std::vector<Partial>& parts, int64_t n, double pairs) {
  const double inf = std::numeric_limits<double>::infinity();
  Partial all;
  for (const Partial& p : parts) all.merge(p);
  c.max_abs = all.max_abs;
  c.max_rel = all.max_rel;
  c.beyond = all.beyond;
  c.got_nonfinite = all.got_nonfinite;
  c.ref_nonfinite = all.ref_nonfinite;
  c.unbounded = all.unbounded;
  c.worst = all.worst;
  c.worst_got = all.worst_got;
  c.worst_ref = all.worst_ref;
  c.worst_bound = all.worst_bound;
  c.max_ratio = std::max(all.max_ratio, 0.0);
  c.checked = n;
  const double err2 = all.err2, ref2 = all.ref2, var = all.var, var2 = all.var2;
  // A non-finite element makes the norm meaningless; so does any error against an all-zero ref.
  if (c.max_abs == inf) c.rel_fro = inf;
  else if (ref2 > 0) c.rel_fro = std::sqrt(err2) / std::sqrt(ref2);
  else c.rel_fro = err2 > 0 ? inf : 0.0;
  const double norm_bound = bound::norm_factor(bound::effective_count(var, var2, pairs)) * std::sqrt(var);
  c.rel_fro_bound = ref2 > 0 ? norm_bound / std::sqrt(ref2) : (norm_bound > 0 ? inf : 0.0);
  if (c.max_abs == inf) c.norm_ratio = inf;
  else c.norm_ratio = norm_bound > 0 ? std::sqrt(err2) / norm_bound : (err2 > 0 ? inf : 0.0);
  c.pass = c.beyond == 0 && c.norm_ratio <= 1.0;
}

template <typename Index>
void accumulate(OutputCheck& c, const Tensor& t, const void* got, const RefTensor& ref, int64_t n, Index index) {
  std::vector<Partial> parts;
  partials(c, t, got, ref, n, index, parts);
  conclude(c, parts, n, c.tol.exact ? 0.0 : equal_value_pairs(t.dtype, ref, n, subnormal_step(t)));
}

OutputCheck start_check(const Tensor& t, Tolerance tol, CompareMode mode) {
  OutputCheck c;
  c.name = t.name;
  c.dtype = t.dtype;
  c.count = t.numel();
  c.tol = tol;
  c.mode = tol.exact ? CompareMode::exact : mode;
  return c;
}

}  // namespace

std::string_view compare_mode_name(CompareMode m) {
  switch (m) {
    case CompareMode::full: return "full";
    case CompareMode::sample: return "sample";
    case CompareMode::exact: return "exact";
  }
  return "full";
}

std::string_view reference_site_name(ReferenceSite s) { return s == ReferenceSite::device ? "device" : "cpu"; }

OutputCheck compare_output(const Tensor& t, const void* got, const RefTensor& ref, Tolerance tol) {
  OutputCheck c = start_check(t, tol, CompareMode::full);
  if (static_cast<int64_t>(ref.value.size()) != c.count || static_cast<int64_t>(ref.scale.size()) != c.count ||
      static_cast<int64_t>(ref.var.size()) != c.count) {
    c.beyond = c.count;  // a reference of another size cannot vouch for anything
    return c;
  }
  accumulate(c, t, got, ref, c.count, [](int64_t k) { return k; });
  return c;
}

OutputCheck compare_sampled(const Tensor& t, const void* got, const SampledRef& ref, Tolerance tol) {
  OutputCheck c = start_check(t, tol, CompareMode::sample);
  const int64_t n = static_cast<int64_t>(ref.index.size());
  bool valid = static_cast<int64_t>(ref.ref.value.size()) == n && static_cast<int64_t>(ref.ref.scale.size()) == n &&
               static_cast<int64_t>(ref.ref.var.size()) == n;
  for (int64_t i : ref.index) valid = valid && i >= 0 && i < c.count;
  if (!valid || (n == 0 && c.count > 0)) {
    c.beyond = std::max<int64_t>(n, 1);  // a malformed sample cannot vouch for anything
    return c;
  }
  accumulate(c, t, got, ref.ref, n, [&ref](int64_t k) { return ref.index[size_t(k)]; });
  return c;
}

struct StreamedComparison::State {
  const Tensor& t;
  const void* got;
  OutputCheck c;
  std::vector<Partial> parts;
  int64_t next = 0;                   // the first element not yet compared
  std::vector<int64_t> positions;     // pair_positions of the whole output
  size_t next_position = 0;
  std::vector<std::pair<double, double>> pairs;
  double ulp_floor = 0;
};

StreamedComparison::StreamedComparison(const Tensor& t, const void* got, Tolerance tol)
    : s_(new State{t, got, start_check(t, tol, CompareMode::full), {}, 0, {}, 0, {}, subnormal_step(t)}) {
  if (!tol.exact) s_->positions = pair_positions(t.numel());
}

StreamedComparison::~StreamedComparison() = default;

bool StreamedComparison::add(int64_t x0, const RefTensor& panel) {
  State& s = *s_;
  const int64_t n = int64_t(panel.value.size());
  if (x0 != s.next || s.next + n > s.c.count || int64_t(panel.scale.size()) != n || int64_t(panel.var.size()) != n)
    return false;
  std::vector<Partial> parts;
  partials(s.c, s.t, s.got, panel, n, [x0](int64_t k) { return x0 + k; }, parts);
  s.parts.insert(s.parts.end(), parts.begin(), parts.end());
  for (; s.next_position < s.positions.size() && s.positions[s.next_position] < x0 + n; ++s.next_position)
    add_pair(s.t.dtype, panel, size_t(s.positions[s.next_position] - x0), s.ulp_floor, s.pairs);
  s.next = x0 + n;
  return true;
}

OutputCheck StreamedComparison::finish() {
  State& s = *s_;
  if (s.next != s.c.count) {  // panels missing: nothing is vouched for
    s.c.beyond = s.c.count;
    return s.c;
  }
  conclude(s.c, s.parts, s.c.count, s.c.tol.exact ? 0.0 : pairs_of(std::move(s.pairs), s.c.count, s.positions.size()));
  return s.c;
}

}  // namespace gexec
