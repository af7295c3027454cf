// `gexec --version`: what this binary is (build_info) and, at run time, the versions of the
// libraries it found (CUDA runtime and driver, cuBLASLt, OpenBLAS). Needs no GPU.
#pragma once

#include <string>

namespace gexec {

std::string version_text();

}  // namespace gexec
