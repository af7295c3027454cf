// TMA tensor maps (tma_map.hpp): cuTensorMapEncodeTiled, from the driver through the runtime.
#include "tma_map.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime_api.h>

namespace gexec::cuda {
namespace {

using EncodeTiled = PFN_cuTensorMapEncodeTiled_v12000;

// gexec links libcudart only: the driver's entry point is asked of the runtime, once.
EncodeTiled encode_tiled() {
  static const EncodeTiled fn = []() -> EncodeTiled {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<EncodeTiled>(f);
  }();
  return fn;
}

}  // namespace

Status encode_tma_map(CUtensorMap* map, DType t, const void* ptr, uint64_t rows, uint64_t cols, uint32_t box_rows,
                      const std::string& who) {
  const EncodeTiled encode = encode_tiled();
  if (!encode) return runtime_error(who + ": the driver does not give cuTensorMapEncodeTiled");
  const uint64_t es = uint64_t(dtype_size(t));
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * es};  // bytes between rows
  const cuuint32_t box[2] = {uint32_t(kTmaRowBytes / es), box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUtensorMapDataType type = t == DType::bf16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : t == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                     : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const CUresult r = encode(map, type, 2, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return runtime_error(who + ": cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(r)) + " for a " +
                         std::to_string(rows) + " x " + std::to_string(cols) + " tensor");
  return Status::success();
}

}  // namespace gexec::cuda
