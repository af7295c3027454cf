// The CUDA Device on the device: capabilities, arena refusal, copies, poison, and inputs drawn
// on the device bit-identical to the host's generate_input().
#include "catch.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gexec/backends/cuda_device.hpp"
#include "gexec/rng/init.hpp"

using namespace gexec;

namespace {

std::unique_ptr<Device> open_device() {
  auto d = open_cuda_device(0);
  if (!d) FAIL(d.error().message);
  return std::move(*d);
}

}  // namespace

TEST_CASE("cuda device: capabilities", "[gpu][device]") {
  auto dev = open_device();
  const DeviceCaps& c = dev->caps();
  CHECK(dev->backend() == Backend::cuda);
  CHECK(c.detected);
  CHECK(!c.name.empty());
  CHECK(c.cc >= 50);
  CHECK(c.total_bytes > 0);
  CHECK(c.free_bytes > 0);
  CHECK(c.free_bytes <= c.total_bytes);
  CHECK(c.sm_count > 0);
  CHECK(!c.cuda_runtime.empty());
  CHECK(!c.cublaslt.empty());
  auto again = detect_cuda_caps(0);
  REQUIRE(again.ok());
  CHECK(again->name == c.name);
  CHECK(again->cc == c.cc);
  CHECK_FALSE(open_cuda_device(cuda_device_count()).ok());
}

TEST_CASE("cuda device: an arena larger than the free memory is refused", "[gpu][device]") {
  auto dev = open_device();
  auto r = dev->allocate_arena(dev->caps().total_bytes + (int64_t(1) << 30));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == Exit::runtime);
  CHECK(r.error().message.find("bytes") != std::string::npos);
  CHECK(r.error().message.find("free") != std::string::npos);
}

TEST_CASE("cuda device: upload, download and poison", "[gpu][device]") {
  auto dev = open_device();
  auto arena = dev->allocate_arena(4096);
  REQUIRE(arena.ok());
  std::vector<uint8_t> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 37 + 11);
  REQUIRE(dev->upload(*arena, in.data(), in.size()).ok());
  REQUIRE(dev->download(out.data(), *arena, out.size()).ok());
  CHECK(out == in);
  REQUIRE(dev->poison(static_cast<char*>(*arena) + 100, 50).ok());
  REQUIRE(dev->synchronize().ok());
  REQUIRE(dev->download(out.data(), *arena, out.size()).ok());
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("byte " << i);
    CHECK(out[i] == (i >= 100 && i < 150 ? 0xFF : in[i]));
  }
}

TEST_CASE("cuda device: inputs drawn on the device match the host bit for bit", "[gpu][device]") {
  auto dev = open_device();
  std::vector<Init> inits(5);
  inits[0].kind = InitKind::normal;
  inits[0].mean = 0.5;
  inits[0].std = 2.0;
  inits[1].kind = InitKind::uniform;
  inits[1].low = -3.0;
  inits[1].high = 0.25;
  inits[2].kind = InitKind::zeros;
  inits[3].kind = InitKind::ones;
  inits[4].kind = InitKind::values;
  for (int i = 0; i < 6; ++i) inits[4].values.edit().push_back(i * 0.3 - 1.0);
  for (DType t : {DType::f16, DType::bf16, DType::f32})
    for (size_t i = 0; i < inits.size(); ++i)
      for (Layout l : {Layout::rowmajor, Layout::colmajor}) {
        Tensor x;
        x.name = "x" + std::to_string(i);
        x.shape = inits[i].kind == InitKind::values ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{33, 31};
        x.dtype = t;
        x.layout = l;
        x.init = inits[i];
        INFO(x.name << " " << dtype_name(t) << " " << layout_name(l));
        auto arena = dev->allocate_arena(x.bytes());
        REQUIRE(arena.ok());
        REQUIRE(dev->fill_input(x, *arena, 1234).ok());
        std::vector<uint8_t> got(size_t(x.bytes()));
        REQUIRE(dev->download(got.data(), *arena, got.size()).ok());
        CHECK(got == generate_input(x, 1234));
      }
}
