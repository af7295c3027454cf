// Large zero-filled arrays on huge pages where the kernel allows (zeros.hpp).
#include "gexec/verify/zeros.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace gexec {

void assign_zeros(std::vector<double>& v, size_t n) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (n * sizeof(double) < 16 * kHuge) {
    v.assign(n, 0.0);
    return;
  }
  // Allocated but not yet touched: the advice applies before the zero-fill faults the pages in.
  std::vector<double> fresh;
  fresh.reserve(n);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(fresh.data()), end = begin + n * sizeof(double);
  const uintptr_t a = (begin + kHuge - 1) & ~(kHuge - 1), b = end & ~(kHuge - 1);
  if (b > a) (void)madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
  fresh.resize(n);
  v.swap(fresh);
}

}  // namespace gexec
