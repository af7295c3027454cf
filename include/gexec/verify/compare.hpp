// Comparing an output with the reference under a per-dtype tolerance.
#pragma once

#include <cstdint>
#include <string>

#include "gexec/ir/graph.hpp"
#include "gexec/ir/tensor.hpp"
#include "gexec/verify/reference.hpp"

namespace gexec {

// An element passes when |got - ref| <= atol + rtol * scale (RefTensor::scale).
struct Tolerance {
  double atol = 0, rtol = 0;
};
Tolerance default_tolerance(DType output);

// The default tolerance of output t of g: default_tolerance of its dtype, with an f8 output's
// atol in real units (times its largest scale), and the fast-accumulation term of an f8 product
// (f8_tolerance.cpp) where the op writing t has fast_accum.
Tolerance output_tolerance(const Graph& g, TensorId t);

// The extra relative error of FP8 fast accumulation (the tensor cores keep fewer bits of the
// partial sums), relative to the product's magnitude scale; the check takes the larger of this
// and the output dtype's rtol. One named place, for the bound to be sharpened from measurements.
double fast_accum_rtol();

struct OutputCheck {
  std::string name;
  DType dtype = DType::f32;
  int64_t count = 0;
  int64_t checked = 0;              // elements compared: count, or fewer when sampled
  std::string mode = "full";        // "full" or "sample"
  double max_abs = 0, max_rel = 0;  // max |got-ref|, max |got-ref| / |ref| over ref != 0
  double rel_fro = 0;               // ||got - ref|| / ||ref||
  int64_t worst = -1;               // element with the largest error relative to its bound
  double worst_got = 0, worst_ref = 0;
  int64_t beyond = 0;               // elements over the tolerance (NaN and infinity included)
  Tolerance tol;
  bool pass = false;
};

OutputCheck compare_output(const Tensor& t, const void* got, const RefTensor& ref, Tolerance tol);

// The same statistics over the elements of a sampled reference only (mode "sample"); `worst`
// is a storage index of the whole tensor.
OutputCheck compare_sampled(const Tensor& t, const void* got, const SampledRef& ref, Tolerance tol);

}  // namespace gexec
