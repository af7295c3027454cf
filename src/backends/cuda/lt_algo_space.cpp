// cuBLASLt's algorithm space, enumerated (lt_algo_space.hpp).
#include "lt_algo_space.hpp"

#include <set>
#include <string>
#include <vector>

namespace gexec::cuda {
namespace {

// A list-valued capability (tile ids), asked for its size first.
std::vector<uint32_t> cap_list(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  size_t bytes = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes) != CUBLAS_STATUS_SUCCESS || bytes == 0) return {};
  std::vector<uint32_t> v(bytes / sizeof(uint32_t));
  size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attr, v.data(), v.size() * sizeof(uint32_t), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return {};
  v.resize(written / sizeof(uint32_t));
  return v;
}

template <class T>
T cap_value(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  T v{};
  size_t written = 0;
  return cublasLtMatmulAlgoCapGetAttribute(&algo, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS ? v : T{};
}

template <class T>
bool set_config(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  return cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &v, sizeof v) == CUBLAS_STATUS_SUCCESS;
}

}  // namespace

int add_algo_space(cublasLtHandle_t handle, const AlgoSpaceTypes& t, const MatmulDesc& desc, const MatrixLayout& a,
                   const MatrixLayout& b, const MatrixLayout& cl, const MatrixLayout& d, LtCandidates& c) {
  std::set<std::string> seen;
  for (int i = 0; i < c.count(); ++i) seen.insert(c.name(i));
  int ids[256];
  int n_ids = 0;
  if (cublasLtMatmulAlgoGetIds(handle, t.compute, t.scale, t.a, t.b, t.c, t.d, 256, ids, &n_ids) != CUBLAS_STATUS_SUCCESS)
    return 0;
  int added = 0;
  for (int i = 0; i < n_ids && added < kAlgoSpaceMax; ++i) {
    cublasLtMatmulAlgo_t base;
    if (cublasLtMatmulAlgoInit(handle, t.compute, t.scale, t.a, t.b, t.c, t.d, ids[i], &base) != CUBLAS_STATUS_SUCCESS)
      continue;
    std::vector<uint32_t> tiles = cap_list(base, CUBLASLT_ALGO_CAP_TILE_IDS);
    if (tiles.empty()) tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
    const bool splits_ok = cap_value<int32_t>(base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0;
    const uint32_t schemes = cap_value<uint32_t>(base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    for (uint32_t tile : tiles)
      for (int split : kAlgoSpaceSplits) {
        if (added >= kAlgoSpaceMax) break;
        if (split > 1 && (!splits_ok || !(schemes & CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE))) break;
        cublasLtMatmulAlgo_t algo = base;
        if (!set_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, tile)) continue;
        if (!set_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, int32_t(split))) continue;
        const uint32_t scheme = split > 1 ? uint32_t(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE) : uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE);
        if (!set_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, scheme)) continue;
        cublasLtMatmulHeuristicResult_t r{};
        if (cublasLtMatmulAlgoCheck(handle, desc.get(), a.get(), b.get(), cl.get(), d.get(), &algo, &r) !=
            CUBLAS_STATUS_SUCCESS)
          continue;
        r.algo = algo;  // AlgoCheck never writes it
        r.state = CUBLAS_STATUS_SUCCESS;
        if (!LtCandidates::usable(r)) continue;  // workspace beyond gexec's
        if (!seen.insert(LtCandidates::config_name(r.algo)).second) continue;
        c.add(r);
        ++added;
      }
  }
  return added;
}

}  // namespace gexec::cuda
