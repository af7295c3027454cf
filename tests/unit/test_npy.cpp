// Tests of .npy reading (orders, versions, dtypes, errors) and writing.
#include <filesystem>
#include <fstream>

#include "catch.hpp"
#include "gexec/io/npy.hpp"
#include "gexec/ir/dtype.hpp"

using namespace gexec;

namespace {

std::string fixture(const std::string& name) { return std::string(GEXEC_SOURCE_DIR) + "/tests/data/npy/" + name; }

// The fixtures hold m[r][c] = 10 r + c + 0.5 (tests/data/make_npy.py).
void check_mat2x3(const NpyArray& a) {
  REQUIRE(a.shape == std::vector<int64_t>{2, 3});
  REQUIRE(a.values.size() == 6);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) CHECK(a.values[size_t(r * 3 + c)] == 10.0 * r + c + 0.5);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gexec_test_" + name)).string();
}

}  // namespace

TEST_CASE("read_npy reads every supported dtype, order and version", "[npy]") {
  auto v = read_npy(fixture("vec3_f32.npy"));
  REQUIRE(v.ok());
  CHECK(v->shape == std::vector<int64_t>{3});
  CHECK(v->descr == "<f4");
  CHECK(v->values == std::vector<double>{1.0, 2.0, 3.0});

  for (const char* name : {"mat2x3_f16.npy", "mat2x3_f32.npy", "mat2x3_f32_fortran.npy", "mat2x3_f64_v2.npy",
                           "mat2x3_f32_be.npy"}) {
    INFO(name);
    auto a = read_npy(fixture(name));
    REQUIRE(a.ok());
    check_mat2x3(*a);
  }
  CHECK(read_npy(fixture("mat2x3_f32_fortran.npy"))->fortran_order);
  CHECK(read_npy(fixture("mat2x3_f16.npy"))->descr == "<f2");
  CHECK(read_npy(fixture("mat2x3_f32_be.npy"))->descr == ">f4");
}

TEST_CASE("read_npy reads int32 files, which only i32 tensors take", "[npy]") {
  auto a = read_npy(fixture("int32.npy"));
  REQUIRE(a.ok());
  CHECK(a->descr == "<i4");
  CHECK(a->values.size() == 2);
  CHECK(npy_dtype_problem("<i4", DType::i32).empty());
  CHECK(npy_dtype_problem("<i8", DType::i32).empty());
  CHECK(npy_dtype_problem("<i4", DType::f32).find("integer data") != std::string::npos);
  CHECK(npy_dtype_problem("<f4", DType::i32).find("an i32 tensor reads int32 or int64") != std::string::npos);
}

TEST_CASE("read_npy refuses bad files with a reason", "[npy]") {
  auto expect_error = [](const std::string& name, const std::string& fragment) {
    auto a = read_npy(fixture(name));
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().code == Exit::bad_input);
    INFO(a.error().message);
    CHECK(a.error().message.find(name) != std::string::npos);
    CHECK(a.error().message.find(fragment) != std::string::npos);
  };
  expect_error("not_npy.npy", "not a .npy file");
  expect_error("truncated.npy", "needs 24");
  expect_error("bad_header.npy", "malformed");
  expect_error("no_such_file.npy", "cannot read the file: No such file or directory");
}

TEST_CASE("write_npy_f32 and write_npy_f16 read back exactly", "[npy]") {
  const std::vector<int64_t> shape = {3, 5};
  std::vector<float> data(15);
  std::vector<uint16_t> bits(15);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = float(i) * 0.37f - 2.0f;
    bits[i] = float_to_f16(data[i]);
  }
  const std::string p32 = temp_path("w32.npy"), p16 = temp_path("w16.npy");
  REQUIRE(write_npy_f32(p32, shape, data.data()).ok());
  REQUIRE(write_npy_f16(p16, shape, bits.data()).ok());

  auto a = read_npy(p32);
  REQUIRE(a.ok());
  CHECK(a->shape == shape);
  CHECK(a->descr == "<f4");
  CHECK_FALSE(a->fortran_order);
  for (size_t i = 0; i < data.size(); ++i) CHECK(a->values[i] == double(data[i]));

  auto b = read_npy(p16);
  REQUIRE(b.ok());
  CHECK(b->descr == "<f2");
  for (size_t i = 0; i < data.size(); ++i) CHECK(b->values[i] == double(f16_to_float(bits[i])));

  // NumPy aligns the data to 64 bytes; so do we.
  CHECK((std::filesystem::file_size(p32) - 15 * 4) % 64 == 0);
  CHECK((std::filesystem::file_size(p16) - 15 * 2) % 64 == 0);

  const std::vector<int64_t> vec = {4};
  REQUIRE(write_npy_f32(p32, vec, data.data()).ok());
  auto c = read_npy(p32);
  REQUIRE(c.ok());
  CHECK(c->shape == vec);
  std::filesystem::remove(p32);
  std::filesystem::remove(p16);

  CHECK_FALSE(write_npy_f32("/nonexistent-dir/x.npy", vec, data.data()).ok());
}
