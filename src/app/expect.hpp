// --expect DIR: each output compared with a result given in a file (<name>.npy, or output_N.pb
// matched by its name or position), besides the reference check. An element passes when
// |got - expected| <= atol + rtol * |expected| (NaN matches NaN, an infinity only itself); the
// defaults per dtype are expect_tolerance's, atol scaled by the output's largest magnitude
// (docs/onnx.md); --expect-atol / --expect-rtol override them as given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gexec/app/model_file.hpp"
#include "gexec/app/run_report.hpp"

namespace gexec {

struct ExpectTolerance {
  double atol = 0, rtol = 0;
};
// f32 1e-5 + 1e-4 |e|, f16 1e-3 + 2^-9 |e|, bf16 1e-2 + 2^-6 |e|, f8e4m3 2^-8 + 2^-2 |e|,
// f8e5m2 2^-15 + 2^-1 |e|: two rounding steps of the dtype relative to the value (one each way),
// and room near zero for sums taken in another order. That atol is for outputs of magnitude 1 at
// most: compare_expected multiplies it by expect_scale.
ExpectTolerance expect_tolerance(DType t);

// The largest finite |value| of an expected output, at least 1. Two implementations that add the
// same terms in another order differ by roundings of the size of the terms, not of the (possibly
// cancelled) sum; the output's largest magnitude stands for that size, so the default atol scales
// with it (GPT-2's MLP in f32 on the H200, sums of 16384 terms: elements near zero differed from
// onnxruntime's by up to 3e-5, beyond the unscaled 1e-5, where gexec passed its reference check).
double expect_scale(const std::vector<double>& values);

struct ExpectedValues {
  std::string file;            // the file read
  std::vector<double> values;  // row-major, in the output's ONNX (or graph) shape
};

// Reads the expected result of every output of `model` from DIR, checking each against the
// output's shape (the file's shape must be the output's, as the model or the graph declares it).
// bad_input naming the file or the missing output. `files` receives the paths read.
Result<std::map<std::string, ExpectedValues>> read_expected(const std::string& dir, const ModelFile& model,
                                                            std::vector<std::string>* files = nullptr);

// Compares the outputs (name -> stored bytes, as read from the device) with the expected values.
ExpectSummary compare_expected(const std::string& dir, const Graph& g, const std::map<std::string, std::vector<uint8_t>>& got,
                               const std::map<std::string, ExpectedValues>& expected, std::optional<double> atol,
                               std::optional<double> rtol);

void print_expect(std::ostream& out, const ExpectSummary& e);
nlohmann::json expect_json(const ExpectSummary& e);

}  // namespace gexec
