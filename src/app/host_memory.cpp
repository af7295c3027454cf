// Host memory: an estimate of a run's peak from the graph alone, and the bytes free to it.
#include "host_memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "report.hpp"

#if GEXEC_HAVE_CPU
#include "gexec/backends/cpu_device.hpp"
#endif

namespace gexec {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t add(int64_t a, int64_t b) { return a > kMax - b ? kMax : a + b; }
int64_t mul(int64_t a, int64_t b) { return b != 0 && a > kMax / b ? kMax : a * b; }

// The reference keeps a value and a scale (two doubles) per element of every live tensor.
constexpr int64_t kRefBytes = 16;

// The full reference's peak, simulating its walk: a tensor is live from its first use to its
// last reader (outputs to the end), and a product copies both operands densely while it runs.
int64_t full_reference_peak(const Graph& g) {
  const GraphIndex idx(g);
  const size_t n = g.tensors.size();
  std::vector<int64_t> last(n, -1);
  for (size_t t = 0; t < n; ++t)
    if (!idx.consumers[t].empty()) last[t] = idx.consumers[t].back();
  std::vector<bool> live(n, false);
  int64_t now = 0, peak = 0;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    for (TensorId t : op.inputs)
      if (!live[size_t(t)]) live[size_t(t)] = true, now = add(now, mul(g.tensor(t).numel(), kRefBytes));
    for (TensorId t : op.outputs)
      if (!live[size_t(t)]) live[size_t(t)] = true, now = add(now, mul(g.tensor(t).numel(), kRefBytes));
    int64_t during = now;
    if ((op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT) && op.inputs.size() >= 2)
      during = add(during, mul(add(g.tensor(op.inputs[0]).numel(), g.tensor(op.inputs[1]).numel()), kRefBytes));
    peak = std::max(peak, during);
    for (TensorId t : op.inputs)
      if (live[size_t(t)] && last[size_t(t)] == int64_t(o) && !idx.is_output[size_t(t)])
        live[size_t(t)] = false, now -= mul(g.tensor(t).numel(), kRefBytes);
  }
  // The outputs are copied once more into storage order at the end.
  for (TensorId t : g.outputs) now = add(now, mul(g.tensor(t).numel(), kRefBytes));
  return std::max(peak, now);
}

// The sampled reference computes in full only what products read from other ops, and lays the
// operands of the products it samples out in double (values, and carried variances where an
// operand comes from an op): counted for every product, an upper bound.
int64_t sampled_reference_peak(const Graph& g, int64_t samples) {
  const GraphIndex idx(g);
  int64_t bytes = 0;
  for (const Op& op : g.ops)
    if (op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT)
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const TensorId t = op.inputs[k];
        const bool computed = idx.producer[size_t(t)] != kNone;
        if (computed) bytes = add(bytes, mul(g.tensor(t).numel(), 2 * kRefBytes));
        if (k < 2) bytes = add(bytes, mul(g.tensor(t).numel(), computed ? 16 : 8));
      }
  // At least `samples` per output, and one in every tile of 8 x 8 (the finest strata) or more.
  for (TensorId t : g.outputs) {
    const int64_t n = g.tensor(t).numel();
    bytes = add(bytes, mul(std::min(std::max(samples, n / 64 + 1), n), kRefBytes + 8));
  }
  return bytes;
}

// "MemAvailable:   123456 kB" from /proc/meminfo, in bytes; -1 when unknown.
int64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream f(line.substr(13));
      int64_t kb = -1;
      f >> kb;
      return kb < 0 ? -1 : mul(kb, 1024);
    }
  return -1;
}

// The process's current virtual size (VmSize), which counts against RLIMIT_AS.
int64_t vm_size() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmSize:", 0) == 0) {
      std::istringstream f(line.substr(7));
      int64_t kb = 0;
      f >> kb;
      return mul(kb, 1024);
    }
  return 0;
}

}  // namespace

int64_t HostEstimate::total() const {
  return add(add(add(inputs, outputs), add(reference, dump)), add(timing, arena));
}

HostEstimate estimate_host_memory(const RunOptions& opts, const Graph& original, VerifyMode check_mode,
                                  const BufferPlan& plan, Backend backend) {
  HostEstimate e;
  const GraphIndex idx(original);
  const bool dump = !opts.dump_dir.empty();
  int64_t largest_input = 0, largest = 0;
  for (size_t t = 0; t < original.tensors.size(); ++t) {
    const Tensor& tensor = original.tensors[t];
    largest = std::max(largest, tensor.numel());
    if (!idx.is_input(TensorId(t))) continue;
    // The reference reads only inputs that some op reads; --dump writes them all.
    if (!dump && idx.consumers[t].empty()) continue;
    largest_input = std::max(largest_input, tensor.bytes());
    int64_t copies = 1;
    if (!opts.load_inputs_dir.empty()) copies = 2;  // the loaded bytes are kept beside the reference's
    e.inputs = add(e.inputs, mul(tensor.bytes(), copies));
  }
  // Reading one .npy file holds its raw bytes and a double per element at once.
  if (!opts.load_inputs_dir.empty()) e.inputs = add(e.inputs, mul(largest_input, 8));
  for (TensorId t : original.outputs) e.outputs = add(e.outputs, original.tensor(t).bytes());
  if (check_mode == VerifyMode::full || check_mode == VerifyMode::exact) e.reference = full_reference_peak(original);
  else if (check_mode == VerifyMode::sample) e.reference = sampled_reference_peak(original, opts.samples);
  if (dump) e.dump = mul(largest, 4);
  e.timing = mul(int64_t(std::max(opts.timing.iters, 0)), 16);
  if (backend == Backend::cpu) {
    e.arena = add(plan.arena_bytes, largest_input);  // and one input drawn at a time
    bool products = false;
    for (const Op& op : original.ops) {
      const bool product = op.type == OpType::MATMUL || op.type == OpType::GEMM_BIAS_ACT;
      products |= product;
      // A constant B is packed once in f32 beside its own bytes, in panels of 32 columns
      // (gexec/backends/cpu_packed_gemm.hpp): an upper bound, whether or not this CPU packs it.
      const Tensor* b = product && op.inputs.size() > 1 ? &original.tensor(op.inputs[1]) : nullptr;
      if (b && b->constant && b->rank() >= 2) {
        const int64_t longer = std::max(b->shape.back(), b->shape[size_t(b->rank() - 2)]);
        e.arena = add(e.arena, mul(add(b->numel(), mul(32, longer)), 4));
      }
    }
    if (products) e.blas_address_space = mul(openblas_buffer_bytes(), openblas_thread_count());
  }
  return e;
}

// OpenBLAS 0.3.21 (DYNAMIC_ARCH, x86-64) maps BUFFER_SIZE = 32 << 22 bytes plus a page per working
// thread, seen as the 134221824-byte malloc it retries forever under ulimit -v; older builds used
// less (32 << 20), so this bounds them too.
int64_t openblas_buffer_bytes() { return (int64_t(32) << 22) + 4096; }

int openblas_thread_count() {
#if GEXEC_HAVE_CPU
  return std::max(1, openblas_threads());
#else
  return 1;
#endif
}

int64_t host_bytes_free(std::string* why, int64_t address_space_only) {
  int64_t free = mem_available();
  *why = "available memory";
  if (free < 0) free = kMax, *why = "no limit known";
  const int64_t used = vm_size();
  for (auto [res, name] : {std::pair{RLIMIT_AS, "the address-space limit (ulimit -v)"},
                           std::pair{RLIMIT_DATA, "the data-size limit (ulimit -d)"}}) {
    struct rlimit lim {};
    if (getrlimit(res, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) continue;
    const int64_t cap = lim.rlim_cur > uint64_t(kMax) ? kMax : int64_t(lim.rlim_cur);
    const int64_t taken = res == RLIMIT_AS ? add(used, address_space_only) : 0;
    const int64_t left = std::max<int64_t>(0, cap - taken);
    if (left < free) {
      free = left;
      *why = name;
      if (res == RLIMIT_AS && address_space_only > 0)
        *why += ", less " + human_bytes(address_space_only) + " of address space for OpenBLAS's buffers (" +
                std::to_string(openblas_thread_count()) + (openblas_thread_count() == 1 ? " thread)" : " threads)");
    }
  }
  return free;
}

Status check_host_memory(const HostEstimate& need) {
  std::string why;
  const int64_t free = host_bytes_free(&why, need.blas_address_space);
  const int64_t total = need.total();
  if (total <= free) return {};
  std::string parts;
  auto part = [&](const char* name, int64_t b) {
    if (b > 0) parts += std::string(parts.empty() ? "" : ", ") + name + " " + human_bytes(b);
  };
  part("reference", need.reference);
  part("inputs", need.inputs);
  part("outputs", need.outputs);
  part("dump", need.dump);
  part("timing", need.timing);
  part("arena", need.arena);
  // The wording of the CPU device's own refusal, so that both read alike.
  return runtime_error("the graph needs " + std::to_string(total) + " bytes of host memory (an estimate: " + parts +
                       "), and the process has " + std::to_string(free) + " bytes free (" + why + "); nothing was run");
}

}  // namespace gexec
