// The cuBLASLt names of gexec's element types and bias/activation epilogues, shared by the
// cuBLASLt GEMM and the FP8 product so that both map a dtype or an epilogue the same way.
#pragma once

#include <cublasLt.h>
#include <library_types.h>

#include "gexec/ir/dtype.hpp"
#include "gexec/ir/op.hpp"

namespace gexec::cuda {

inline cudaDataType_t lt_data_type(DType t) {
  switch (t) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::f32: return CUDA_R_32F;
    case DType::f8e4m3: return CUDA_R_8F_E4M3;
    case DType::f8e5m2: return CUDA_R_8F_E5M2;
    case DType::i32: return CUDA_R_32I;  // never a product's operand: the kernels' declarations refuse it
  }
  return CUDA_R_32F;
}

// The epilogue that applies the bias (when there is one) and then the activation.
inline cublasLtEpilogue_t lt_epilogue(bool bias, Act act) {
  switch (act) {
    case Act::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Act::gelu: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Act::none:
    case Act::silu:
    case Act::gelu_erf: break;  // no SiLU or erf GELU epilogue in cuBLASLt: GemmEpilogue applies them after the product
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace gexec::cuda
