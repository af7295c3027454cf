// Which devices this binary's CUDA code runs on, from the architectures it was compiled for.
// The selector asks before offering a CUDA kernel: every CUDA run launches gexec's own kernels
// (input initialisation, elementwise ops, padding copies), so a device that the fatbin does not
// cover can run none of them.
#include <cstdlib>
#include <sstream>

#include "gexec/build_info.hpp"

namespace gexec {
namespace {

// CMake's forms: "80" (SASS and PTX), "80-real" (SASS), "80-virtual" (PTX); "native", "all" and
// "all-major" leave the choice to CMake and are taken as covering every device.
bool open_ended(const std::string& archs) {
  return archs.find("native") != std::string::npos || archs.find("all") != std::string::npos;
}

}  // namespace

std::vector<FatbinArch> fatbin_archs() {
  std::vector<FatbinArch> out;
  std::istringstream in(build_info().cuda_architectures);
  for (std::string a; in >> a;) {
    const int cc = std::atoi(a.c_str());
    if (cc <= 0) continue;
    const bool real_only = a.find("-real") != std::string::npos;
    const bool virtual_only = a.find("-virtual") != std::string::npos;
    if (!virtual_only) out.push_back({cc, false});
    if (!real_only) out.push_back({cc, true});
  }
  return out;
}

bool fatbin_runs_on(int cc, std::string* why) {
  if (!build_info().cuda) {
    if (why) *why = "this build has no CUDA backend";
    return false;
  }
  if (open_ended(build_info().cuda_architectures)) return true;
  for (const FatbinArch& a : fatbin_archs())
    if (a.ptx ? cc >= a.cc : (cc / 10 == a.cc / 10 && cc >= a.cc)) return true;
  if (why)
    *why = "this binary's CUDA code (" + describe_fatbin() + ") does not run on sm_" + std::to_string(cc) +
           "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc);
  return false;
}

std::string describe_fatbin() {
  if (!build_info().cuda) return "none";
  if (open_ended(build_info().cuda_architectures)) return build_info().cuda_architectures;
  std::string s;
  for (const FatbinArch& a : fatbin_archs()) {
    if (!s.empty()) s += ' ';
    s += a.ptx ? "compute_" : "sm_";
    s += std::to_string(a.cc);
  }
  return s.empty() ? "none" : s;
}

}  // namespace gexec
