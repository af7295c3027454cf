// What this binary was built from and with: version, commit, build type, backends, CUDA code.
// Filled in at build time (cmake/build_info.cmake); `gexec --version` prints it.
#pragma once

#include <string>
#include <vector>

namespace gexec {

struct BuildInfo {
  std::string version;             // e.g. "0.1.0"
  std::string commit;              // git commit, 12 hex digits; "unknown" outside a git checkout
  bool dirty = false;              // tracked files differed from the commit when it was built
  std::string build_type;          // e.g. "Release"
  std::string cxx_compiler;        // e.g. "GNU 12.2.0"
  std::string cuda_compiler;       // e.g. "NVIDIA 13.0.88"; empty without the CUDA backend
  bool cuda = false;               // the CUDA backend is compiled in
  bool cpu = false;                // the CPU backend (OpenBLAS) is compiled in
  std::string cuda_architectures;  // CMAKE_CUDA_ARCHITECTURES, space-separated, e.g. "80-real 90-real 90-virtual"
};

const BuildInfo& build_info();

// The CUDA code in this binary, from cuda_architectures: the SASS it carries ("sm_80") and the
// PTX it can JIT-compile for newer devices ("compute_90").
struct FatbinArch {
  int cc = 0;          // e.g. 80
  bool ptx = false;    // PTX (runs on cc and newer) rather than SASS (runs on cc.major, minor >= cc)
};
std::vector<FatbinArch> fatbin_archs();

// Whether this binary's CUDA kernels can be launched on a device of compute capability `cc`;
// `why` (if given) receives the reason when they cannot.
bool fatbin_runs_on(int cc, std::string* why = nullptr);

// "sm_80 sm_90 compute_90", or "none".
std::string describe_fatbin();

}  // namespace gexec
