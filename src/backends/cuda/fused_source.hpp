// The CUDA source of one FUSED_ELEMENTWISE group, compiled at set-up (nvrtc_kernel.hpp) into a
// kernel of straight-line code: its steps, dtypes and roundings written out, so that no
// instruction is decoded per element (the program interpreter of fused_kernel.cuh is the
// fallback where compiling fails). Plain C++ with no CUDA headers, so that the unit tests can
// look at the source without a device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gexec/ir/dtype.hpp"
#include "gexec/ir/op.hpp"

namespace gexec::cuda {

// The generated kernel's name and its one parameter, laid out alike on both sides (the source
// declares the same struct).
inline constexpr const char* kFusedEntry = "gexec_fused_group";
struct FusedParams {
  const void* in[kGroupMaxInputs] = {};
  void* out[kGroupMaxOutputs] = {};
  int64_t n = 0, cols = 1;  // elements of the group's shape, and its last dimension
  int32_t vec = 0;          // every full-tensor buffer 16-byte aligned: vector accesses
};
// Elements per thread and chunk: 16 bytes of a 16-bit dtype, 32 of f32.
inline constexpr int kFusedSourceVec = 8;

struct FusedOperand {
  DType dtype = DType::f32;
  bool bias = false;  // a [cols] vector read at each element's column
};

// The source for group `a` (a FUSED_ELEMENTWISE op's attrs) over these inputs and outputs.
std::string fused_source(const Attrs& a, const std::vector<FusedOperand>& inputs, const std::vector<DType>& outputs);

}  // namespace gexec::cuda
