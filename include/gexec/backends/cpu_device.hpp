// Opening the CPU backend (OpenBLAS for products, threads for elementwise work).
#pragma once

#include <memory>

#include "gexec/exec/device.hpp"

namespace gexec {

std::unique_ptr<Device> open_cpu_device();

}  // namespace gexec
