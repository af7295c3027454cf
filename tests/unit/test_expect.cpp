// --expect's comparison (src/app/expect.cpp): the default atol per dtype, scaled by the expected
// output's largest magnitude, passes the reordering differences of long sums near zero and still
// fails an element off by more than the dtype's rounding; --expect-atol is taken as given.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../../src/app/expect.hpp"
#include "catch.hpp"

using namespace gexec;

namespace {

Graph one_output(int64_t n) {
  Graph g;
  Tensor t;
  t.name = "Y";
  t.shape = {n};
  t.dtype = DType::f32;
  g.outputs.push_back(g.add_tensor(t));
  return g;
}

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

ExpectedOutput compare(const std::vector<double>& want, const std::vector<float>& got, std::optional<double> atol = {}) {
  const Graph g = one_output(int64_t(want.size()));
  const std::map<std::string, std::vector<uint8_t>> outputs{{"Y", bytes_of(got)}};
  const std::map<std::string, ExpectedValues> expected{{"Y", ExpectedValues{"Y.npy", want}}};
  const ExpectSummary s = compare_expected("dir", g, outputs, expected, atol, std::nullopt);
  REQUIRE(s.outputs.size() == 1);
  return s.outputs[0];
}

}  // namespace

TEST_CASE("--expect: the default atol scales with the output's largest magnitude", "[expect]") {
  CHECK(expect_scale({0.5, -0.25}) == 1);  // at least 1
  const std::vector<double> big{8.0, -6.0, 0.0068, NAN, INFINITY};
  CHECK(expect_scale(big) == 8);  // the non-finite ones left out

  // Outputs up to 8: an element near zero off by 3e-5 (a sum of many terms taken in another
  // order) passes by default (atol 8e-5), fails with --expect-atol 1e-5 as given.
  std::vector<double> want{8.0, -6.0, 0.0068, 1.0};
  std::vector<float> got{8.0f, -6.0f, float(0.0068 + 3e-5), 1.0f};
  ExpectedOutput d = compare(want, got);
  CHECK(d.atol == Approx(8e-5));
  CHECK(d.pass);
  ExpectedOutput given = compare(want, got, 1e-5);
  CHECK(given.atol == 1e-5);
  CHECK_FALSE(given.pass);
  CHECK(given.beyond == 1);
  CHECK(given.worst == 2);

  // Sharp at that scale: 8 off by 1e-3 (an eighth of a percent) is beyond 8e-5 + 1e-4 * 8.
  got = {float(8.0 + 1e-3), -6.0f, 0.0068f, 1.0f};
  d = compare(want, got);
  CHECK_FALSE(d.pass);
  CHECK(d.worst == 0);

  // Outputs below 1 keep the unscaled atol: 3e-5 near zero is beyond 1e-5.
  want = {0.5, 0.0068};
  got = {0.5f, float(0.0068 + 3e-5)};
  d = compare(want, got);
  CHECK(d.atol == Approx(1e-5));
  CHECK_FALSE(d.pass);
}
