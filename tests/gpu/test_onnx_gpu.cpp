// ONNX models on the CUDA backend: the checked-in MLP with its test data passes the reference
// check and --expect with full f32 products (--precision f32: no TF32, as ONNX specifies), the
// kernels say so, and the default TF32 products are bounded as TF32 by the check.
#include <string>

#include "catch.hpp"
#include "unit/process.hpp"

using namespace gexec;
using test::has;

TEST_CASE("gpu onnx: an ONNX model with its test data, f32 products without TF32", "[gpu][onnx]") {
#if GEXEC_HAVE_ONNX
  const std::string model = test::source_path("tests/data/onnx/mlp.onnx");
  const std::string data = test::source_path("tests/data/onnx/mlp_data");
  auto r = test::run_gexec("run '" + model + "' --backend cuda --precision f32 --load-inputs '" + data + "' --expect '" +
                           data + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "f32 inputs: f32 products, no TF32 (--precision f32)"));
  CHECK(has(r.output, "expect: against"));
  CHECK(has(r.output, "result: pass"));
  // The default: TF32 products (relative errors near 2^-11, beyond --expect's f32 allowance), which
  // the reference check bounds as TF32.
  r = test::run_gexec("run '" + model + "' --backend cuda --load-inputs '" + data + "' --report -");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "TF32 tensor cores"));
  CHECK(has(r.output, "\"precision\": \"tf32\""));
#else
  SUCCEED("skipped: this build has no ONNX input");
#endif
}
