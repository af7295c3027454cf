// OpenBLAS (0.3.21) maps a 128 MiB work buffer in each of its worker threads as the library loads,
// and in the calling thread at its first product; a mapping that fails is retried forever at 100%
// CPU, and exit() then waits forever for that worker. Under an address-space or data-size limit
// (ulimit -v, -d), gexec therefore restarts itself once, before anything else, with
// OPENBLAS_NUM_THREADS=1, unless the user chose OpenBLAS's thread count: no worker maps anything,
// and the one buffer left is counted in the host-memory estimate (src/app/host_memory.hpp).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

namespace gexec::cli {

inline void restart_with_one_openblas_thread(char** argv) {
#if GEXEC_HAVE_CPU
  for (const char* chosen : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"})
    if (std::getenv(chosen)) return;
  bool limited = false;
  for (int res : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit lim {};
    limited |= getrlimit(res, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
  }
  if (!limited) return;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);  // also what stops a second restart
  execv("/proc/self/exe", argv);
  // No /proc: go on with OpenBLAS's own thread count.
#else
  (void)argv;
#endif
}

}  // namespace gexec::cli
