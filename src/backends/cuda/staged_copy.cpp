// Large host <-> device copies through page-locked buffers (staged_copy.hpp).
#include "staged_copy.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace gexec::cuda {
namespace {

// memcpy of one chunk on up to 8 threads: one thread copies at a fraction of the memory's
// bandwidth, below what the link delivers.
void spread_memcpy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = size_t(4) << 20;
  const size_t threads = std::clamp<size_t>(bytes / kPiece, 1, std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
  const size_t per = (bytes + threads - 1) / threads;
  auto part = [&](size_t t) {
    const size_t at = t * per;
    if (at < bytes) std::memcpy(static_cast<char*>(dst) + at, static_cast<const char*>(src) + at, std::min(per, bytes - at));
  };
  std::vector<std::jthread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(part, t);
  part(0);
}

}  // namespace

bool StagedCopy::ready() {
  if (buf_[0]) return true;
  if (tried_) return false;
  tried_ = true;
  for (int i = 0; i < 2; ++i) {
    void* p = nullptr;
    if (cudaMallocHost(&p, kChunk) != cudaSuccess) {
      (void)cudaGetLastError();  // not the next checked call's error
      buf_[0].reset(), buf_[1].reset();
      return false;
    }
    buf_[i] = PinnedHost(p);
    auto e = make_event(cudaEventDisableTiming);
    if (!e) {
      buf_[0].reset(), buf_[1].reset();
      return false;
    }
    done_[i] = std::move(*e);
  }
  return true;
}

Status StagedCopy::direct(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  GEXEC_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  return {};
}

Status StagedCopy::to_host(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes < kDirect) return direct(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
  const std::lock_guard<std::mutex> lock(mu_);
  if (!ready()) return direct(dst, src, bytes, cudaMemcpyDeviceToHost, stream);
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  auto length = [&](size_t c) { return std::min(kChunk, bytes - c * kChunk); };
  // Chunk c goes into buffer c % 2 while the host copies chunk c - 1 out of the other one.
  for (size_t c = 0; c <= chunks; ++c) {
    if (c < chunks) {
      GEXEC_CUDA_TRY(cudaMemcpyAsync(buf_[c % 2].get(), static_cast<const char*>(src) + c * kChunk, length(c),
                                     cudaMemcpyDeviceToHost, stream));
      GEXEC_CUDA_TRY(cudaEventRecord(done_[c % 2].get(), stream));
    }
    if (c > 0) {
      const size_t p = c - 1;
      GEXEC_CUDA_TRY(cudaEventSynchronize(done_[p % 2].get()));
      spread_memcpy(static_cast<char*>(dst) + p * kChunk, buf_[p % 2].get(), length(p));
    }
  }
  return {};
}

Status StagedCopy::to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes < kDirect) return direct(dst, src, bytes, cudaMemcpyHostToDevice, stream);
  const std::lock_guard<std::mutex> lock(mu_);
  if (!ready()) return direct(dst, src, bytes, cudaMemcpyHostToDevice, stream);
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  for (size_t c = 0; c < chunks; ++c) {
    const size_t b = c % 2, n = std::min(kChunk, bytes - c * kChunk);
    // Buffer b last fed chunk c - 2: its transfer must be done before it is filled again.
    if (c >= 2) GEXEC_CUDA_TRY(cudaEventSynchronize(done_[b].get()));
    spread_memcpy(buf_[b].get(), static_cast<const char*>(src) + c * kChunk, n);
    GEXEC_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(dst) + c * kChunk, buf_[b].get(), n, cudaMemcpyHostToDevice, stream));
    GEXEC_CUDA_TRY(cudaEventRecord(done_[b].get(), stream));
  }
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  return {};
}

}  // namespace gexec::cuda
