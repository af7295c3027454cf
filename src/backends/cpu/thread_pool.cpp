// The pool (thread_pool.hpp): workers wait for a job's generation to change, then take piece
// numbers from an atomic counter until none is left. A worker, and a caller waiting for its job
// to end, first watches for the change for a while (kSpin), yielding the core in between, and only
// then blocks on a condition variable: a graph's ops call the pool back to back, and a blocked
// thread took tens of microseconds to wake, as long as a small op's whole work. The pool is never
// destroyed: workers blocked in a wait at exit are ended with the process, not joined.
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "gexec/backends/cpu_device.hpp"

namespace gexec::cpu {
namespace {

thread_local bool in_piece = false;  // a call from inside a piece runs inline (no pool re-entry)

constexpr std::chrono::microseconds kSpin{100};

// Yields until `ready()` or kSpin has passed; says whether it became ready.
template <class F>
bool spin_until(F&& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if (i % 16 == 15 && std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
}

class Pool {
 public:
  explicit Pool(int64_t workers) {
    for (int64_t w = 0; w < workers; ++w) std::thread([this] { work(); }).detach();
  }

  void run(int64_t pieces, const std::function<void(int64_t)>& piece) {
    std::lock_guard<std::mutex> one_job(job_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      piece_ = &piece;
      pieces_ = pieces;
      next_.store(0);
      left_ = pieces;
      ended_.store(false);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    take_pieces();
    spin_until([this] { return ended_.load(); });
    std::unique_lock<std::mutex> lock(mutex_);
    // Every piece finished and no worker still holding this job (one that took it late must not
    // take pieces of the next job with this job's function).
    done_.wait(lock, [this] { return left_ == 0 && holding_ == 0; });
    piece_ = nullptr;
  }

 private:
  void work() {
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return generation_.load() != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
      }
      take_pieces();
    }
  }

  void take_pieces() {
    int64_t finished = 0;
    const std::function<void(int64_t)>* piece = nullptr;
    int64_t pieces = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!piece_) return;  // woken after the job ended
      piece = piece_, pieces = pieces_;
      ++holding_;
    }
    in_piece = true;
    for (int64_t t; (t = next_.fetch_add(1)) < pieces; ++finished) (*piece)(t);
    in_piece = false;
    std::lock_guard<std::mutex> lock(mutex_);
    left_ -= finished;
    if (--holding_ == 0 && left_ == 0) ended_.store(true), done_.notify_all();
  }

  std::mutex job_mutex_, mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* piece_ = nullptr;
  int64_t pieces_ = 0, left_ = 0, holding_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<uint64_t> generation_{0};  // changed under mutex_, watched without it
  std::atomic<bool> ended_{false};       // left_ == 0 && holding_ == 0, set under mutex_
};

}  // namespace

int64_t pool_threads() {
  // As many as OpenBLAS runs (OPENBLAS_NUM_THREADS where set, else the hardware's): one thread
  // count for every kernel of the backend.
  static const int64_t n = std::max(1, openblas_threads());
  return n;
}

void run_pieces(int64_t pieces, const std::function<void(int64_t)>& piece) {
  if (pieces <= 1 || in_piece || pool_threads() == 1) {
    for (int64_t t = 0; t < pieces; ++t) piece(t);
    return;
  }
  static Pool* const pool = new Pool(pool_threads() - 1);  // never destroyed: see above
  pool->run(pieces, piece);
}

}  // namespace gexec::cpu
