// Large host arrays, zero-filled: on transparent huge pages where the kernel grants them, and
// faulted in on all of the machine's threads, so that their first touch (most of what a large
// copy into them, or a large reference, costs) is neither 4 KiB faults nor one thread's work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gexec {

// v = n zeros, in a fresh allocation; from 32 MiB on, the kernel is asked for huge pages for it
// (madvise; a hint, ignored where transparent huge pages are off) and the pages are faulted in
// on several threads (MADV_POPULATE_WRITE, Linux 5.14 on; before it, by the zero-fill).
void assign_zeros(std::vector<double>& v, size_t n);
void assign_zeros(std::vector<uint8_t>& v, size_t n);

}  // namespace gexec
