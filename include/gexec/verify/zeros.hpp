// The reference's large per-element arrays: zero-filled, on transparent huge pages where the
// kernel grants them, so that their first touch costs a 512th of the page faults.
#pragma once

#include <cstddef>
#include <vector>

namespace gexec {

// v = n zeros, in a fresh allocation; from 32 MiB on, the kernel is asked for huge pages for it
// (madvise; a hint, ignored where transparent huge pages are off).
void assign_zeros(std::vector<double>& v, size_t n);

}  // namespace gexec
