// The CPU device: host memory for the arena, inputs drawn on the host, kernels run in place.
#include "gexec/backends/cpu_device.hpp"

#include <unistd.h>

#include <cstring>
#include <new>
#include <string>

#include "cpu_kernels.hpp"
#include "cpu_timer.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "gexec/rng/init.hpp"

namespace gexec {
namespace {

struct AlignedFree {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t(kArenaAlignment)); }
};
using HostBuffer = std::unique_ptr<void, AlignedFree>;

int64_t pages_bytes(int name) {
  const long pages = sysconf(name), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? int64_t(pages) * int64_t(size) : 0;
}

class CpuDevice final : public Device {
 public:
  CpuDevice() {
    const int64_t threads = cpu::pool_threads();
    caps_.name = "CPU (" + std::to_string(threads) + " threads, OpenBLAS)";
    caps_.cc = 0;
    caps_.total_bytes = pages_bytes(_SC_PHYS_PAGES);
    caps_.free_bytes = pages_bytes(_SC_AVPHYS_PAGES);
    caps_.detected = true;
  }

  Backend backend() const override { return Backend::cpu; }
  const DeviceCaps& caps() const override { return caps_; }

  Result<void*> allocate_arena(int64_t bytes) override {
    if (bytes < 0) return bad_input("arena of " + std::to_string(bytes) + " bytes");
    const int64_t free = pages_bytes(_SC_AVPHYS_PAGES);
    auto refuse = [&] {
      return runtime_error("the graph needs " + std::to_string(bytes) + " bytes of host memory, and the machine has " +
                           std::to_string(free) + " bytes free (of " + std::to_string(caps_.total_bytes) + ")");
    };
    // Refused before trying beyond the physical memory: with overcommit the allocation could
    // succeed and the process die later, on first touch. Between the free and the total memory
    // it is tried, since the page cache counts as used but gives way.
    if (caps_.total_bytes > 0 && bytes > caps_.total_bytes) return refuse();
    // Whole alignment units, so that a kernel may read a full vector at the end.
    const int64_t size = (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    void* p = ::operator new(static_cast<size_t>(size), std::align_val_t(kArenaAlignment), std::nothrow);
    if (!p) return refuse();
    arenas_.emplace_back(p);
    return p;
  }

  Result<std::shared_ptr<void>> allocate_buffer(int64_t bytes) override {
    if (bytes < 0) return bad_input("buffer of " + std::to_string(bytes) + " bytes");
    const int64_t size = (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    void* p = ::operator new(static_cast<size_t>(size), std::align_val_t(kArenaAlignment), std::nothrow);
    if (!p) return runtime_error("allocating a buffer of " + std::to_string(bytes) + " bytes of host memory");
    return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(kArenaAlignment)); });
  }

  Status fill_input(const Tensor& t, void* dst, uint64_t seed) override {
    const std::vector<uint8_t> bytes = generate_input(t, seed);
    std::memcpy(dst, bytes.data(), bytes.size());
    return {};
  }
  Status upload(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return {};
  }
  Status download(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return {};
  }
  Status poison(void* dst, size_t bytes) override {
    std::memset(dst, 0xFF, bytes);
    return {};
  }

  Result<std::unique_ptr<Kernel>> make_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                              const Binding& binding, const KernelOptions&) override {
    if (def.backend != Backend::cpu || def.op != op.type)
      return bad_input("kernel " + def.name + " cannot run op " + op.name + " on the CPU");
    for (const void* p : binding.inputs)
      if (!p) return bad_input("op " + op.name + ": an input is not bound");
    for (const void* p : binding.outputs)
      if (!p) return bad_input("op " + op.name + ": the output is not bound");
    switch (def.impl) {
      case KernelImpl::cpu_gemm: return cpu::make_gemm_kernel(g, op, binding);
      case KernelImpl::cpu_elementwise: return cpu::make_elementwise_kernel(g, op, binding);
      case KernelImpl::cpu_fused_elementwise: return cpu::make_fused_kernel(g, op, binding);
      case KernelImpl::cpu_grouped_gemm: return cpu::make_grouped_kernel(g, op, binding);
      case KernelImpl::cpu_collective: return cpu::make_collective_kernel(g, op, binding, communicator(), rank());
      default: break;
    }
    return bad_input("kernel " + def.name + " has no CPU implementation");
  }

  // Kernels run to completion inside run(): nothing is ever pending.
  Status synchronize() override { return {}; }
  Result<std::vector<double>> time_runs(const std::function<Status()>& enqueue, const TimingOptions& opts,
                                        bool* graph_used) override {
    if (graph_used) *graph_used = false;  // null for --duration's later rounds
    return cpu::time_on_host(enqueue, opts);
  }

 private:
  DeviceCaps caps_;
  std::vector<HostBuffer> arenas_;
};

}  // namespace

std::unique_ptr<Device> open_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace gexec
