// The cuBLASLt candidate list (src/backends/cuda/lt_algo.hpp), checked without a device: the
// default choice (LtCandidates::make_first) moves a listed configuration to the front, puts an
// unlisted one there, and refuses one that is not usable. The algorithms are configured by
// cuBLASLt's own attribute calls, which read and write the opaque structure on the host.
#include <string>
#include <vector>

#include "catch.hpp"
#include "unit/skip.hpp"

#ifdef GEXEC_HAVE_CUDA
#include "../../src/backends/cuda/lt_algo.hpp"

using namespace gexec::cuda;

namespace {

// A usable heuristic result whose configuration differs from others by its tile id.
cublasLtMatmulHeuristicResult_t result(uint32_t tile, size_t workspace = 0) {
  cublasLtMatmulHeuristicResult_t r{};
  REQUIRE(cublasLtMatmulAlgoConfigSetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile) ==
          CUBLAS_STATUS_SUCCESS);
  r.workspaceSize = workspace;
  r.state = CUBLAS_STATUS_SUCCESS;
  return r;
}

// The tile ids of the list, in order.
std::vector<uint64_t> tiles(const LtCandidates& c) {
  std::vector<uint64_t> t;
  for (int i = 0; i < c.count(); ++i) t.push_back(algo_attr(c.at(i).algo, CUBLASLT_ALGO_CONFIG_TILE_ID));
  return t;
}

}  // namespace

TEST_CASE("LtCandidates::make_first: the default choice leads the list", "[lt]") {
  LtCandidates c;
  for (uint32_t t : {20u, 17u, 18u}) REQUIRE(c.add(result(t)));
  REQUIRE(tiles(c) == std::vector<uint64_t>{20, 17, 18});
  REQUIRE(c.name(0) != c.name(1));

  // Listed: moved to the front, the others keep their order, nothing is duplicated.
  CHECK(c.make_first(result(18)));
  CHECK(tiles(c) == std::vector<uint64_t>{18, 20, 17});
  // Already first: unchanged.
  CHECK(c.make_first(result(18)));
  CHECK(tiles(c) == std::vector<uint64_t>{18, 20, 17});
  // Not listed: put in front of the rest.
  CHECK(c.make_first(result(135)));
  CHECK(tiles(c) == std::vector<uint64_t>{135, 18, 20, 17});

  // Not usable (a failed state, a workspace beyond gexec's): refused, the list as it was.
  cublasLtMatmulHeuristicResult_t failed = result(24);
  failed.state = CUBLAS_STATUS_NOT_SUPPORTED;
  CHECK_FALSE(c.make_first(failed));
  CHECK_FALSE(c.make_first(result(24, kGemmWorkspaceBytes + 1)));
  CHECK(tiles(c) == std::vector<uint64_t>{135, 18, 20, 17});
  // The chosen candidate is the first, as the default.
  CHECK(c.chosen() == 0);
  CHECK(algo_attr(c.algo(), CUBLASLT_ALGO_CONFIG_TILE_ID) == 135);
}

TEST_CASE("small_workspace_default: full f32 products keep the whole workspace's first answer", "[lt]") {
  CHECK_FALSE(small_workspace_default(CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(small_workspace_default(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  for (cudaDataType_t t : {CUDA_R_16F, CUDA_R_16BF, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2})
    CHECK(small_workspace_default(CUBLAS_COMPUTE_32F, t));
}
#else
GEXEC_SKIPPED_TEST("small_workspace_default: full f32 products keep the whole workspace's first answer", "[lt]",
                   "this build has no CUDA backend (no nvcc found, or configured with -DGEXEC_CUDA=OFF)")
GEXEC_SKIPPED_TEST("LtCandidates::make_first: the default choice leads the list", "[lt]",
                   "this build has no CUDA backend (no nvcc found, or configured with -DGEXEC_CUDA=OFF)")
#endif
