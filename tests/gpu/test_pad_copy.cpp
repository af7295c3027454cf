// The padded GEMM's block copy (src/backends/cuda/pad_copy.cu) against a host copy: every
// combination of aligned and misaligned sides, both element sizes, ragged and exact row counts.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "../../src/backends/cuda/pad_copy.hpp"
#include "../../src/backends/cuda/raii.hpp"
#include "catch.hpp"

using namespace gexec;

namespace {

constexpr uint8_t kPoison = 0xA5;

struct Case {
  int elem;
  int64_t rows, cols, ld_src, ld_dst;
  int64_t src_offset, dst_offset;  // in elements from a 256-byte aligned allocation
};

// Runs one copy into a poisoned destination and checks every byte of it on the host.
void check_copy(const Case& c) {
  INFO("elem " << c.elem << " rows " << c.rows << " cols " << c.cols << " ld_src " << c.ld_src << " ld_dst "
               << c.ld_dst << " offsets " << c.src_offset << "," << c.dst_offset);
  const size_t src_bytes = size_t(c.src_offset + c.ld_src * c.cols) * size_t(c.elem);
  const size_t dst_bytes = size_t(c.dst_offset + c.ld_dst * c.cols) * size_t(c.elem);
  std::vector<uint8_t> src(src_bytes), dst(dst_bytes, kPoison);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t((i * 2654435761u) >> 13);
  auto s = cuda::DeviceMemory::allocate(src_bytes), d = cuda::DeviceMemory::allocate(dst_bytes);
  REQUIRE(s.ok());
  REQUIRE(d.ok());
  REQUIRE(cudaMemcpy(s->get(), src.data(), src_bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(d->get(), dst.data(), dst_bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  char* sp = static_cast<char*>(s->get()) + c.src_offset * c.elem;
  char* dp = static_cast<char*>(d->get()) + c.dst_offset * c.elem;
  const Status st = cuda::launch_pad_copy(dp, c.ld_dst, sp, c.ld_src, c.rows, c.cols, c.elem, nullptr);
  INFO((st.ok() ? std::string() : st.error().message));
  REQUIRE(st.ok());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<uint8_t> got(dst_bytes);
  REQUIRE(cudaMemcpy(got.data(), d->get(), dst_bytes, cudaMemcpyDeviceToHost) == cudaSuccess);

  // The block is copied; rows past it up to 16 bytes are zero where dst is 16-byte aligned;
  // everything else keeps its poison.
  const bool dst_vec = (c.dst_offset * c.elem) % 16 == 0 && (c.ld_dst * c.elem) % 16 == 0;
  const int64_t run = 16 / c.elem, zero_to = dst_vec ? (c.rows + run - 1) / run * run : c.rows;
  int64_t wrong = 0;
  for (int64_t col = 0; col < c.cols; ++col)
    for (int64_t r = 0; r < c.ld_dst; ++r) {
      const uint8_t* g = got.data() + size_t(c.dst_offset + r + col * c.ld_dst) * size_t(c.elem);
      std::vector<uint8_t> want(size_t(c.elem), kPoison);
      if (r < c.rows)
        std::memcpy(want.data(), src.data() + size_t(c.src_offset + r + col * c.ld_src) * size_t(c.elem), size_t(c.elem));
      else if (r < zero_to)
        std::fill(want.begin(), want.end(), uint8_t(0));
      if (std::memcmp(g, want.data(), size_t(c.elem)) != 0) ++wrong;
    }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("pad copy: every alignment combination matches the host copy", "[gpu][padding]") {
  for (int elem : {2, 4}) {
    const int64_t run = 16 / elem;
    for (int64_t rows : {int64_t(1), run - 1, run, int64_t(13), int64_t(4095), int64_t(4096)}) {
      const int64_t odd = rows, even = (rows + run - 1) / run * run;
      // Into a padded buffer (the copies in), out of one (the copy out), between two misaligned
      // ones, and between two aligned ones; with a misaligned base address on the odd side.
      check_copy({elem, rows, 7, odd, even + run, 1, 0});
      check_copy({elem, rows, 7, even, odd, 0, 1});
      check_copy({elem, rows, 5, odd + 1, odd + 3, 3, 1});
      check_copy({elem, rows, 5, even, even, 0, 0});
    }
  }
}

TEST_CASE("pad copy: more columns than one grid row holds", "[gpu][padding]") {
  check_copy({2, 9, 70000, 9, 16, 0, 0});
}
