// The CPU backend's worker threads: one set for the process, started at the first parallel call
// and kept. Starting and joining a thread per piece of work cost tens of microseconds each, which
// with 16 threads and several calls per op was a tenth of a 64-token product's time.
#pragma once

#include <cstdint>
#include <functional>

namespace gexec::cpu {

// The number of threads a call can use, this one included: OpenBLAS's thread count.
int64_t pool_threads();

// Runs piece(t) for t in [0, pieces) on the pool's threads and this one, and returns when all
// have finished (pieces below 2^32 - 1: the index shares a word with the job's generation). One
// call at a time uses the pool (others wait for it); a call made from inside a piece runs its
// pieces on its own thread, in order.
void run_pieces(int64_t pieces, const std::function<void(int64_t)>& piece);

}  // namespace gexec::cpu
