// The kernel table, assembled from each backend's declarations, and its printed form.
#include "gexec/kernels/table.hpp"

#include <algorithm>
#include <sstream>

#include "gexec/kernels/declared.hpp"

namespace gexec {

std::string_view backend_name(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

const std::vector<KernelDef>& kernel_table() {
  static const std::vector<KernelDef> table = [] {
    std::vector<KernelDef> all;
    for (auto&& defs : {cublaslt_kernel_defs(), cuda_elementwise_kernel_defs(), cuda_fused_kernel_defs()})
      all.insert(all.end(), defs.begin(), defs.end());
#if GEXEC_HAVE_CPU
    auto cpu = cpu_kernel_defs();
    all.insert(all.end(), cpu.begin(), cpu.end());
#endif
    // The selector walks this order: by backend, then op type, then priority (highest first).
    std::stable_sort(all.begin(), all.end(), [](const KernelDef& a, const KernelDef& b) {
      if (a.backend != b.backend) return a.backend < b.backend;
      if (a.op != b.op) return a.op < b.op;
      return a.priority > b.priority;
    });
    return all;
  }();
  return table;
}

namespace {

std::string dtype_list(const std::vector<DType>& ts) {
  if (ts.empty()) return "-";
  std::string s;
  for (DType t : ts) s += (s.empty() ? "" : "|") + std::string(dtype_name(t));
  return s;
}

}  // namespace

std::string print_kernel_table() {
  std::ostringstream os;
  for (const KernelDef& k : kernel_table()) {
    os << k.name << "  " << op_type_name(k.op) << " on " << backend_name(k.backend) << ", priority " << k.priority;
    if (k.min_cc) os << ", sm_" << k.min_cc << "+";
    os << "\n    " << k.summary << "\n    inputs:";
    for (const auto& in : k.inputs) os << " " << dtype_list(in);
    os << "; outputs: " << dtype_list(k.outputs);
    os << "; colmajor " << (k.colmajor ? "yes" : "no");
    if (k.op == OpType::MATMUL || k.op == OpType::GEMM_BIAS_ACT)
      os << "; transposes " << (k.transposes ? "yes" : "no") << "; batched " << (k.batched ? "yes" : "no");
    if (!k.acts.empty()) {
      os << "; acts";
      for (Act a : k.acts) os << " " << act_name(a);
    }
    if (k.align_bytes) os << "; alignment " << k.align_bytes << " B";
    os << "\n";
  }
  return os.str();
}

}  // namespace gexec
