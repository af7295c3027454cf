// The OpenBLAS library's own description of itself, read at run time (it may differ from the
// headers the build saw when the shared library was replaced since), and its thread count.
#include <cblas.h>

#include <string>

#include "gexec/backends/cpu_device.hpp"

namespace gexec {

std::string openblas_version() {
  const char* config = openblas_get_config();  // e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"
  std::string s = config ? config : "unknown";
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

int openblas_threads() { return openblas_get_num_threads(); }

}  // namespace gexec
