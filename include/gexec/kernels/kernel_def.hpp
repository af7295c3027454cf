// A kernel's declaration: what it supports, written beside its code and listed in the table.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/kernels/device_caps.hpp"
#include "gexec/status.hpp"

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

// --pad: whether the cuBLASLt GEMM copies operands with misaligned rows into padded buffers.
// automatic decides by a cost estimate; never and always are for measuring both ways and tests.
enum class PadPolicy : uint8_t { automatic, never, always };
std::string_view pad_policy_name(PadPolicy p);  // "auto", "never", "always"
// bad_input naming the values allowed when `name` is none of them.
Result<PadPolicy> parse_pad_policy(std::string_view name);

// The user's switches that selection and the kernels' preparation both read: given to
// select_kernels, kept in the Selection, and handed by the executor to Device::make_kernel.
struct KernelOptions {
  PadPolicy pad = PadPolicy::automatic;
  // --precision: f32 products on cuBLASLt's TF32 tensor cores (true, the default) or in full f32
  // (CUBLAS_COMPUTE_32F: ONNX's semantics, the conformance tests). The CPU multiplies in f32 either way.
  bool tf32 = true;
  // --kernel OP=NAME: the kernel that op OP must run on ("*": every op that kernel is declared
  // for). The selector offers no other for it, and the kernel's cost model is not asked.
  std::map<std::string, std::string> forced;
  // --algo-space all: the cuBLASLt GEMM offers the autotuner every configuration of cuBLASLt's
  // algorithm space that cublasLtMatmulAlgoCheck accepts (lt_algo_space.hpp), after the heuristic's.
  bool algo_space_all = false;
  // --autotune or --tuning-cache: a product that both the skinny GEMM and cuBLASLt can run gets
  // both families' variants (src/backends/cuda/gemm_alternatives.hpp), unless a kernel was forced:
  // to time them, or to take the one a cache names (its entry is keyed by both families).
  bool tune_alternatives = false;
  // The kernel forced for `op`, or null.
  const std::string* forced_for(const Op& op) const {
    auto it = forced.find(op.name);
    if (it == forced.end()) it = forced.find("*");
    return it == forced.end() ? nullptr : &it->second;
  }
  // Whether `kernel` was forced for `op` by name (a "*" forces it where it is declared for the op type).
  bool is_forced(const Op& op, const std::string& kernel) const {
    const std::string* f = forced_for(op);
    return f && *f == kernel;
  }
};

// "OP=NAME" (or "NAME", meaning every op: "*=NAME") into `forced`; bad_input for an empty part.
Status parse_forced_kernel(std::string_view spec, std::map<std::string, std::string>& forced);

// The code that implements a declaration: each backend's Device::make_kernel switches on it in
// one place. One value per kernel family (a family may serve several op types and dtypes); a
// new kernel of an existing family needs no new value.
enum class KernelImpl : uint8_t {
  none,                    // a declaration for tests (no backend builds it)
  cublaslt_gemm,           // src/backends/cuda/cublaslt_gemm.cpp
  cuda_elementwise,        // src/backends/cuda/elementwise.cu
  cublaslt_fp8_gemm,       // src/backends/cuda/fp8_gemm.cpp
  cuda_f8_cast,            // src/backends/cuda/f8_cast.cpp (kernels in f8_convert.cu)
  cuda_fused_elementwise,  // src/backends/cuda/fused_elementwise.cu (FUSED_ELEMENTWISE groups)
  cuda_skinny_gemm,        // src/backends/cuda/skinny_gemm.cu (decode shapes, M <= 128)
  cpu_gemm,                // src/backends/cpu/cpu_gemm.cpp (f8 operands dequantized there)
  cpu_elementwise,         // src/backends/cpu/cpu_elementwise.cpp (f8 CAST in cpu_f8.cpp)
  cpu_fused_elementwise,   // src/backends/cpu/cpu_fused.cpp (FUSED_ELEMENTWISE groups)
  cpu_grouped_gemm,        // src/backends/cpu/cpu_grouped.cpp (GROUPED_GEMM)
  cuda_grouped_gemm,       // src/backends/cuda/grouped_gemm.cu, grouped_gemm_sm90.cu (GROUPED_GEMM; GEMM_BIAS_ACT as one group)
  cuda_grouped_gemm_mma,   // the same family held to its mma.sync kernel (--kernel, to compare)
  cpu_collective,          // src/backends/cpu/cpu_collective.cpp (the CPU ranks of --tp, in host memory)
  nccl_collective,         // src/backends/cuda/nccl_collective.cpp (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER)
};

struct KernelDef {
  std::string name;  // e.g. "cublaslt.gemm_bias_act"; for people and reports, never dispatched on
  KernelImpl impl = KernelImpl::none;
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
  std::function<Verdict(const Graph&, const Op&, const DeviceCaps&, const KernelOptions&)> check;
};

}  // namespace gexec
