// Large zero-filled host arrays (zeros.hpp).
#include "gexec/ir/zeros.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace gexec {
namespace {

constexpr uintptr_t kHuge = uintptr_t(2) << 20;
constexpr uintptr_t kPiece = 16 * kHuge;  // what one thread faults in at a time

// Advises huge pages for the whole 2 MiB pages of [begin, end) and faults them in, kPiece at a
// time, on up to the machine's threads: the kernel's clearing of fresh pages is most of a first
// touch's cost, and one thread does it at a fraction of the memory's bandwidth (an 8192^2 check's
// 512 MiB arrays took ~0.1 s each).
void prepare(uintptr_t begin, uintptr_t end) {
  const uintptr_t a = (begin + kHuge - 1) & ~(kHuge - 1), b = end & ~(kHuge - 1);
  if (b <= a) return;
  (void)madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  const size_t pieces = (b - a + kPiece - 1) / kPiece;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t p = next.fetch_add(1); p < pieces; p = next.fetch_add(1)) {
      const uintptr_t at = a + p * kPiece;
      (void)madvise(reinterpret_cast<void*>(at), std::min(kPiece, b - at), MADV_POPULATE_WRITE);
    }
  };
  const size_t threads = std::min<size_t>(pieces, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
#endif
}

template <class T>
void fill(std::vector<T>& v, size_t n) {
  if (n * sizeof(T) < 16 * kHuge) {
    v.assign(n, T(0));
    return;
  }
  // Allocated but not yet touched: the advice applies before the pages are faulted in.
  std::vector<T> fresh;
  fresh.reserve(n);
  const uintptr_t begin = reinterpret_cast<uintptr_t>(fresh.data());
  prepare(begin, begin + n * sizeof(T));
  fresh.resize(n);
  v.swap(fresh);
}

}  // namespace

void assign_zeros(std::vector<double>& v, size_t n) { fill(v, n); }
void assign_zeros(std::vector<uint8_t>& v, size_t n) { fill(v, n); }

}  // namespace gexec
