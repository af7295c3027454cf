// The reference's per-element loops over the machine's threads, in chunks fixed by the size alone.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace gexec::ref {

// Below this many elements a loop runs on the calling thread: starting threads costs more.
constexpr int64_t kParallelMin = int64_t(1) << 16;

// Calls fn(chunk, begin, end) for the chunks [c * chunk, min(n, (c + 1) * chunk)) of [0, n), on
// up to the machine's threads. The chunks depend on n and `chunk` only, so that partial results
// kept per chunk and merged in chunk order give the same bits on any number of threads.
// `cost` is the work of one of the n items in elements (a sum over k: k), so that a few long
// items are spread too.
template <class Fn>
void for_chunks(int64_t n, int64_t chunk, Fn&& fn, int64_t cost = 1) {
  if (n <= 0) return;
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t chunks = (n + chunk - 1) / chunk;
  const int64_t threads =
      n * std::max<int64_t>(cost, 1) < kParallelMin ? 1 : std::min<int64_t>(chunks, std::max<int64_t>(1, std::thread::hardware_concurrency()));
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1))
      fn(c, c * chunk, std::min(n, (c + 1) * chunk));
  };
  if (threads <= 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

// The chunk size for_chunks is given by the per-element loops: large enough that a chunk's
// bookkeeping is nothing beside its work, small enough to spread any large tensor.
constexpr int64_t kChunk = int64_t(1) << 15;

}  // namespace gexec::ref
