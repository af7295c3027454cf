// A kernel's declaration: what it supports, written beside its code and listed in the table.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/kernels/device_caps.hpp"

namespace gexec {

// Every buffer the executor hands a kernel starts at a multiple of this.
constexpr int64_t kArenaAlignment = 256;

enum class Backend : uint8_t { cuda, cpu };
std::string_view backend_name(Backend b);

// A kernel's answer for one op: empty `rejected` means accepted; notes say what it will do
// beyond the plain op (e.g. "converting the constant f32 bias to f16 once, before the runs").
struct Verdict {
  std::string rejected;
  std::vector<std::string> notes;
  bool ok() const { return rejected.empty(); }
};

struct KernelDef {
  std::string name;  // e.g. "cublaslt.gemm_bias_act"
  OpType op = OpType::MATMUL;
  Backend backend = Backend::cuda;
  int priority = 0;  // higher is tried first among a backend's kernels for one op type
  std::vector<std::vector<DType>> inputs;  // per input position, the dtypes it reads
  std::vector<DType> outputs;              // the output dtypes it writes
  bool colmajor = false;    // reads and writes colmajor rank-2 tensors
  bool transposes = false;  // honours trans_a / trans_b
  bool batched = false;     // rank-3 products
  std::vector<Act> acts;    // GEMM_BIAS_ACT: the activations it applies
  int align_bytes = 0;      // the buffer alignment it needs (the arena gives 256)
  int min_cc = 0;           // CUDA compute capability needed, e.g. 80; 0 for none
  std::string summary;
  // What the fields cannot express; may also add notes. Unset means accept.
  std::function<Verdict(const Graph&, const Op&, const DeviceCaps&)> check;
};

}  // namespace gexec
