// The kernel table: every kernel of every backend, as declared beside each kernel's code.
#pragma once

#include <string>
#include <vector>

#include "gexec/kernels/kernel_def.hpp"

namespace gexec {

const std::vector<KernelDef>& kernel_table();

// `gexec kernels`: one block per kernel with its capabilities.
std::string print_kernel_table();

}  // namespace gexec
