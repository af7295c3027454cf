// Comparing an output with the reference: error statistics and the per-element tolerance check.
#include "gexec/verify/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gexec/ir/real_value.hpp"

namespace gexec {

// The check is |got - ref| <= atol + rtol * scale, where scale bounds the magnitudes that
// produced the element (for a product sum_k |a_ik| |b_kj|, plus |bias|). What a correct device
// may differ by, relative to scale:
//  - its output is rounded once to the dtype: half an ulp, 2^-p for a p+1 bit significand
//    (f16 2^-11, bf16 2^-8, f32 2^-24);
//  - the reference of an unfused graph also rounds each intermediate to its dtype, where a
//    fused kernel does not: another half ulp per intermediate (a product, then a bias add);
//  - f32 accumulation in another order: about K * 2^-24 at worst, sqrt(K) * 2^-24 typically;
//  - TF32 products (f32 through tensor cores) round both operands to 11 significant bits: 2^-10.
// rtol is four half ulps of the output dtype, which covers the two roundings of an unfused chain
// plus accumulation error up to K of a few thousand; for f32 it is set by TF32, not by the
// output dtype. atol only covers results near zero (subnormals, cancellation below atol).
Tolerance default_tolerance(DType output) {
  switch (output) {
    case DType::f32: return {1e-6, std::ldexp(1.0, -9)};
    case DType::f16: return {1e-5, std::ldexp(1.0, -9)};
    case DType::bf16: return {1e-4, std::ldexp(1.0, -6)};
    // f8: a device whose value differs from the reference's by a little may round to the
    // neighbouring code, one ulp away: 2^-3 of the value for e4m3, 2^-2 for e5m2. atol is one
    // step of the subnormal grid, in stored units (output_tolerance multiplies it by the scale).
    case DType::f8e4m3: return {std::ldexp(1.0, -9), std::ldexp(1.0, -3)};
    case DType::f8e5m2: return {std::ldexp(1.0, -16), std::ldexp(1.0, -2)};
  }
  return {};
}

namespace {

// The statistics over elements at(k), k < n, of t: element k is stored at index(k) in `got`
// and its reference is ref.value[k], ref.scale[k].
template <typename Index>
void accumulate(OutputCheck& c, const Tensor& t, const void* got, const RefTensor& ref, int64_t n, Index index) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tolerance tol = c.tol;
  double err2 = 0, ref2 = 0, worst_ratio = -1;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = index(k);
    const double g = load_real(got, t, i), r = ref.value[size_t(k)];
    const double bound = tol.atol + tol.rtol * ref.scale[size_t(k)];
    // A non-finite value on either side is never a match, even inf against inf.
    const bool finite = std::isfinite(g) && std::isfinite(r) && std::isfinite(bound);
    const double err = finite ? std::fabs(g - r) : inf;
    const bool over = !finite || err > bound;
    if (over) ++c.beyond;
    c.max_abs = std::max(c.max_abs, err);
    if (r != 0) c.max_rel = std::max(c.max_rel, err / std::fabs(r));
    if (finite) {
      err2 += err * err;
      ref2 += r * r;
    }
    const double ratio = !finite ? inf : bound > 0 ? err / bound : (err > 0 ? inf : 0.0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      c.worst = i;
      c.worst_got = g;
      c.worst_ref = r;
    }
  }
  c.checked = n;
  // A non-finite element makes the norm meaningless; so does any error against an all-zero ref.
  if (c.max_abs == inf) c.rel_fro = inf;
  else if (ref2 > 0) c.rel_fro = std::sqrt(err2) / std::sqrt(ref2);
  else c.rel_fro = err2 > 0 ? inf : 0.0;
  c.pass = c.beyond == 0;
}

OutputCheck start_check(const Tensor& t, Tolerance tol, const char* mode) {
  OutputCheck c;
  c.name = t.name;
  c.dtype = t.dtype;
  c.count = t.numel();
  c.tol = tol;
  c.mode = mode;
  return c;
}

}  // namespace

OutputCheck compare_output(const Tensor& t, const void* got, const RefTensor& ref, Tolerance tol) {
  OutputCheck c = start_check(t, tol, "full");
  if (static_cast<int64_t>(ref.value.size()) != c.count || static_cast<int64_t>(ref.scale.size()) != c.count) {
    c.beyond = c.count;  // a reference of another size cannot vouch for anything
    return c;
  }
  accumulate(c, t, got, ref, c.count, [](int64_t k) { return k; });
  return c;
}

OutputCheck compare_sampled(const Tensor& t, const void* got, const SampledRef& ref, Tolerance tol) {
  OutputCheck c = start_check(t, tol, "sample");
  const int64_t n = static_cast<int64_t>(ref.index.size());
  bool valid = static_cast<int64_t>(ref.ref.value.size()) == n && static_cast<int64_t>(ref.ref.scale.size()) == n;
  for (int64_t i : ref.index) valid = valid && i >= 0 && i < c.count;
  if (!valid || (n == 0 && c.count > 0)) {
    c.beyond = std::max<int64_t>(n, 1);  // a malformed sample cannot vouch for anything
    return c;
  }
  accumulate(c, t, got, ref.ref, n, [&ref](int64_t k) { return ref.index[size_t(k)]; });
  return c;
}

}  // namespace gexec
