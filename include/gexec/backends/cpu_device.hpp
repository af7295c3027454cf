// Opening the CPU backend (OpenBLAS for products, threads for elementwise work).
#pragma once

#include <memory>
#include <string>

#include "gexec/exec/device.hpp"

namespace gexec {

std::unique_ptr<Device> open_cpu_device();

// What the OpenBLAS library says of itself at run time (openblas_get_config()).
std::string openblas_version();
// The threads OpenBLAS runs a product on (openblas_get_num_threads()).
int openblas_threads();

}  // namespace gexec
