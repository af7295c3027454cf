// Comparing an output with the reference under the bound of bound.hpp: per element and normwise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gexec/ir/tensor.hpp"
#include "gexec/verify/reference.hpp"

namespace gexec {

// The allowances besides the rounding model: atol for results near zero (cancellation below
// the model's reach), rtol an extra allowance times each element's scale (0 unless asked for).
// exact: bit equality required (--verify exact), every bound 0.
struct Tolerance {
  double atol = 0, rtol = 0;
  bool exact = false;
};
Tolerance default_tolerance(DType output);

// The default tolerance of output t of g: default_tolerance of its dtype, with an f8 output's
// atol in real units (times its largest scale); f8_tolerance.cpp.
Tolerance output_tolerance(const Tensor& t);

// Whether g has an f8 product, and one with fast_accum (f8_tolerance.cpp): the check of outputs
// from elsewhere (gexec check) assumes fp8_tensor_core_precision (bound.hpp) for such graphs.
bool has_f8_product(const Graph& g);
bool has_fast_accum(const Graph& g);

// The per-element bound of element i (storage order) of a reference, and its normwise variance.
// ulp_floor: the spacing of the output's grid below its normal range, where ulp_of (which leaves
// f8's to atol) does not see it: subnormal_step(t).
double element_bound(DType dt, const RefTensor& ref, size_t i, const Tolerance& tol);
double element_norm_var(DType dt, const RefTensor& ref, size_t i, double ulp_floor = 0.0);
// An f8 tensor's subnormal step in real units (at its largest scale); 0 for other dtypes, whose
// ulp_of has the floor already.
double subnormal_step(const Tensor& t);

// How an output was compared: every element (full), a sample by strata, or bit for bit (exact).
enum class CompareMode : uint8_t { full, sample, exact };
std::string_view compare_mode_name(CompareMode m);  // "full", "sample", "exact"
// Where a reference's products were summed: on the CPU, or on a device in float64 (each product's
// elements cross-checked against the CPU's sums).
enum class ReferenceSite : uint8_t { cpu, device };
std::string_view reference_site_name(ReferenceSite s);  // "cpu", "device"

struct OutputCheck {
  std::string name;
  DType dtype = DType::f32;
  int64_t count = 0;
  int64_t checked = 0;              // elements compared: count, or fewer when sampled
  CompareMode mode = CompareMode::full;
  double max_abs = 0, max_rel = 0;  // max |got-ref|, max |got-ref| / |ref| over ref != 0
  double rel_fro = 0;               // ||got - ref|| / ||ref||
  double rel_fro_bound = 0;         // the normwise bound, relative: B / ||ref||
  double norm_ratio = 0;            // ||got - ref|| / B: above 1 fails
  double max_ratio = 0;             // max over elements of |got - ref| / bound: above 1 fails
  int64_t worst = -1;               // element with the largest error relative to its bound
  double worst_got = 0, worst_ref = 0, worst_bound = 0;
  int64_t beyond = 0;               // elements over their bound (NaN and infinity included)
  int64_t got_nonfinite = 0;        // checked elements whose output is inf or NaN, other than the reference's
  int64_t ref_nonfinite = 0;        // checked elements whose reference is inf or NaN, other than the output's
  int64_t unbounded = 0;            // elements whose finite reference no finite bound covers: not compared
  Tolerance tol;
  bool pass = false;                // beyond == 0 and norm_ratio <= 1
  // What checked it, set by the caller that chose the reference: where the products were summed
  // (on a device: cross_checked of their elements summed again on the CPU), the strata of a
  // sampled check (tile, 0: none), and all of it in words for the report.
  ReferenceSite reference = ReferenceSite::cpu;
  int64_t cross_checked = 0;
  int64_t tile = 0;
  std::string checked_by;
};

OutputCheck compare_output(const Tensor& t, const void* got, const RefTensor& ref, Tolerance tol);

// The same statistics over the elements of a sampled reference only (mode "sample"); `worst`
// is a storage index of the whole tensor.
OutputCheck compare_sampled(const Tensor& t, const void* got, const SampledRef& ref, Tolerance tol);

// compare_output over a reference that comes in panels (stream_reference): the whole reference is
// never held. Panels come in order, each a whole number of ref::kChunk elements but the last;
// the statistics then have the bits compare_output gives on the whole.
class StreamedComparison {
 public:
  StreamedComparison(const Tensor& t, const void* got, Tolerance tol);
  ~StreamedComparison();
  StreamedComparison(const StreamedComparison&) = delete;
  StreamedComparison& operator=(const StreamedComparison&) = delete;
  // Elements [x0, x0 + panel size) of t (storage order) against `panel`; false where the panel
  // does not follow the last one or its arrays differ in size (finish() then fails every element).
  bool add(int64_t x0, const RefTensor& panel);
  // The check, once every element was added; else every element counts as beyond its bound.
  OutputCheck finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gexec
