// The pool (thread_pool.hpp): workers wait on a condition variable for a job's generation to
// change, then take piece numbers from an atomic counter until none is left. The pool is never
// destroyed: workers blocked in a wait at exit are ended with the process, not joined.
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "gexec/backends/cpu_device.hpp"

namespace gexec::cpu {
namespace {

thread_local bool in_piece = false;  // a call from inside a piece runs inline (no pool re-entry)

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
      ++generation_;
    }
    wake_.notify_all();
    take_pieces();
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
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
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
    if (--holding_ == 0 && left_ == 0) done_.notify_all();
  }

  std::mutex job_mutex_, mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* piece_ = nullptr;
  int64_t pieces_ = 0, left_ = 0, holding_ = 0;
  std::atomic<int64_t> next_{0};
  uint64_t generation_ = 0;
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
