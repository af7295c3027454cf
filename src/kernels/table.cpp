// The kernel table, assembled from each backend's declarations, and its printed form.
#include "gexec/kernels/table.hpp"

#include <algorithm>
#include <sstream>

#include "gexec/build_info.hpp"
#include "gexec/kernels/declared.hpp"

namespace gexec {

std::string_view backend_name(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

const std::vector<KernelDef>& kernel_table() {
  static const std::vector<KernelDef> table = [] {
    std::vector<KernelDef> all;
    for (const KernelDeclarations& source : kKernelDeclarations) {
      if (!source.built) continue;
      auto defs = source.defs();
      all.insert(all.end(), defs.begin(), defs.end());
    }
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

std::string_view pad_policy_name(PadPolicy p) {
  switch (p) {
    case PadPolicy::never: return "never";
    case PadPolicy::always: return "always";
    case PadPolicy::automatic: break;
  }
  return "auto";
}

Status parse_forced_kernel(std::string_view spec, std::map<std::string, std::string>& forced) {
  const auto eq = spec.find('=');
  const std::string op(eq == std::string_view::npos ? "*" : spec.substr(0, eq));
  const std::string kernel(eq == std::string_view::npos ? spec : spec.substr(eq + 1));
  if (op.empty() || kernel.empty())
    return bad_input("--kernel: \"" + std::string(spec) + "\" is not OP=NAME (an op's name, or *, and a kernel of `gexec kernels`)");
  bool known = false;
  for (const KernelDef& k : kernel_table()) known |= k.name == kernel;
  if (!known) {
    std::string names;
    for (const KernelDef& k : kernel_table()) names += (names.empty() ? "" : ", ") + k.name;
    return bad_input("--kernel: no kernel \"" + kernel + "\"; the table has " + names);
  }
  if (const auto it = forced.find(op); it != forced.end() && it->second != kernel)
    return bad_input("--kernel: " + (op == "*" ? std::string("every op") : "op " + op) + " is forced twice, to " +
                     it->second + " and to " + kernel);
  forced[op] = kernel;
  return {};
}

Result<PadPolicy> parse_pad_policy(std::string_view name) {
  for (PadPolicy p : {PadPolicy::automatic, PadPolicy::never, PadPolicy::always})
    if (name == pad_policy_name(p)) return p;
  return bad_input("--pad: unknown value \"" + std::string(name) + "\"; expected one of auto, never, always");
}

namespace {

std::string dtype_list(const std::vector<DType>& ts) {
  if (ts.empty()) return "-";
  std::string s;
  for (DType t : ts) {  // appended piece by piece: GCC 12 warns (-Wrestrict) on the concatenated form
    if (!s.empty()) s += '|';
    s += dtype_name(t);
  }
  return s;
}

// The lowest compute capability a CUDA kernel runs at in this binary: its own minimum, raised to
// the oldest architecture the fatbin carries code for (the selector refuses devices below it).
int effective_min_cc(const KernelDef& k) {
  int cc = k.min_cc;
  if (k.backend != Backend::cuda || !build_info().cuda) return cc;
  int lowest = 0;
  for (const FatbinArch& a : fatbin_archs())
    if (!lowest || a.cc < lowest) lowest = a.cc;
  return std::max(cc, lowest);
}

}  // namespace

std::string print_kernel_table() {
  std::ostringstream os;
  if (build_info().cuda)
    os << "CUDA code in this binary: " << describe_fatbin() << " (SASS runs on its major version, PTX on newer devices)\n";
  for (const KernelDef& k : kernel_table()) {
    os << k.name << "  " << op_type_name(k.op) << " on " << backend_name(k.backend) << ", priority " << k.priority;
    if (const int cc = effective_min_cc(k)) os << ", sm_" << cc << "+";
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
