// The pool (thread_pool.hpp). A job is published through one atomic word, `state_`: its generation
// (high 32 bits) and the next piece to take (low 32 bits). Workers take pieces by compare-and-swap
// on that word and count what they finished in `done_`; the caller takes pieces too, then waits
// for `done_` to reach the count. No mutex is taken on this path: with 16 threads, the three
// locks a worker took per job under the earlier design queued them behind each other, and a
// contended lock may put a thread to sleep, tens of microseconds, as long as a small op's work.
//
// Between jobs a worker watches `state_` for a while (kSpin), pausing the core between looks and
// yielding it now and then, and only then sleeps on a condition variable: a graph's ops call the
// pool back to back. The caller wakes sleepers only where some are counted (no system call
// otherwise). The pool is never destroyed: workers asleep at exit are ended with the process.
#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "gexec/backends/cpu_device.hpp"

namespace gexec::cpu {
namespace {

thread_local bool in_piece = false;  // a call from inside a piece runs inline (no pool re-entry)

constexpr std::chrono::microseconds kSpin{200};
constexpr uint64_t kClosed = 0xffffffffu;  // a piece index: the job is being set up, take nothing

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Watches until `ready()` or kSpin has passed; says whether it became ready. The clock is read
// and the core yielded every 64 looks (a pause is tens of cycles; a yield is a system call).
template <class F>
bool spin_until(F&& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::yield();
    }
  }
}

class Pool {
 public:
  explicit Pool(int64_t workers) {
    for (int64_t w = 0; w < workers; ++w) std::thread([this] { work(); }).detach();
  }

  void run(int64_t pieces, const std::function<void(int64_t)>& piece) {
    std::lock_guard<std::mutex> one_job(job_mutex_);  // calls from two threads take turns
    // Every access below is sequentially consistent. The order that gives makes taking a piece
    // safe: the job's function and count are written only while the state says "closed", so a
    // worker whose compare-and-swap succeeds read them while this job, not the next, was open.
    const uint64_t gen = (state_.load() >> 32) + 1;
    state_.store(gen << 32 | kClosed);
    piece_.store(&piece);
    pieces_.store(pieces);
    done_.store(0);
    state_.store(gen << 32);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);  // a sleeper is waiting, or about to test state_
      wake_.notify_all();
    }
    done_.fetch_add(take_pieces());
    if (!spin_until([&] { return done_.load() == pieces; }))
      while (done_.load() != pieces) std::this_thread::yield();  // a piece is long: no hurry
  }

 private:
  void work() {
    uint64_t seen = 0;  // the generation last found open
    for (;;) {
      // A job of another generation, open: one still being set up is not yet this worker's.
      uint64_t s = 0;
      const auto fresh = [&] {
        s = state_.load();
        return (s >> 32) != seen && (s & kClosed) != kClosed;
      };
      if (!spin_until(fresh)) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, fresh);
        sleepers_.fetch_sub(1);
      }
      seen = s >> 32;
      // A job ends only once every piece taken is counted here, so these pieces are all of the
      // job that was open, and done_ is not reset under them.
      if (const int64_t finished = take_pieces()) done_.fetch_add(finished);
    }
  }

  // Takes the open job's pieces until none is left; returns how many it ran.
  int64_t take_pieces() {
    int64_t finished = 0;
    for (;;) {
      uint64_t s = state_.load();
      const uint64_t next = s & kClosed;
      if (next == kClosed) return finished;
      const std::function<void(int64_t)>* piece = piece_.load();
      if (int64_t(next) >= pieces_.load()) return finished;
      if (!state_.compare_exchange_weak(s, s + 1)) continue;
      in_piece = true;
      (*piece)(int64_t(next));
      in_piece = false;
      ++finished;
    }
  }

  std::mutex job_mutex_, mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> state_{0};  // generation << 32 | next piece (kClosed while set up)
  std::atomic<const std::function<void(int64_t)>*> piece_{nullptr};
  std::atomic<int64_t> pieces_{0}, done_{0};
  std::atomic<int> sleepers_{0};
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
