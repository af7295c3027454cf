// The CUDA backend's Device: capabilities, memory, input initialisation, kernel dispatch.
#include "cuda_device.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "cublaslt_gemm.hpp"
#include "cuda_timer.hpp"
#include "peak.hpp"
#include "elementwise.hpp"
#include "f8_convert.hpp"
#include "fp8_gemm.hpp"
#include "fused_elementwise.hpp"
#include "gemm_alternatives.hpp"
#include "grouped_kernel.hpp"
#include "nccl_collective.hpp"
#include "skinny_gemm.hpp"
#include "gexec/rng/init.hpp"

namespace gexec {

int cuda_device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    (void)cudaGetLastError();  // leave no error behind for the next call to find
    return 0;
  }
  if (n == 0 && why) *why = "the driver reports no CUDA device";
  return n;
}

namespace cuda {
namespace {

Status check_ordinal(int ordinal) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (ordinal < 0 || ordinal >= n)
    return runtime_error("there is no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(n) +
                         " visible" + (why.empty() ? "" : ": " + why) + ")");
  return {};
}

// "13.0" from 13000; "13.1.0" from 130100.
std::string runtime_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
std::string lt_version(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

// The current device's capabilities (cudaSetDevice done by the caller).
Result<DeviceCaps> read_caps(int ordinal) {
  DeviceCaps c;
  cudaDeviceProp prop{};
  GEXEC_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
  int major = 0, minor = 0, sms = 0, rt = 0;
  GEXEC_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal));
  GEXEC_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal));
  GEXEC_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
  GEXEC_CUDA_TRY(cudaRuntimeGetVersion(&rt));
  size_t free_b = 0, total_b = 0;
  GEXEC_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  c.name = prop.name;
  c.cc = major * 10 + minor;
  c.total_bytes = int64_t(total_b);
  c.free_bytes = int64_t(free_b);
  c.sm_count = sms;
  c.cuda_runtime = runtime_version(rt);
  c.cublaslt = lt_version(cublasLtGetVersion());
  c.detected = true;
  return c;
}

}  // namespace

Result<std::unique_ptr<CudaDevice>> CudaDevice::open(int ordinal) {
  GEXEC_TRY(check_ordinal(ordinal));
  GEXEC_CUDA_TRY(cudaSetDevice(ordinal));
  std::unique_ptr<CudaDevice> d(new CudaDevice());
  d->ordinal_ = ordinal;
  auto caps = read_caps(ordinal);
  if (!caps) return caps.error();
  d->caps_ = std::move(*caps);
  auto stream = make_stream();
  if (!stream) return stream.error();
  d->stream_ = std::move(*stream);
  auto lt = make_lt_handle();
  if (!lt) return lt.error();
  d->lt_ = std::move(*lt);
  return d;
}

// Work still enqueued must finish before its memory goes.
CudaDevice::~CudaDevice() {
  if (stream_) (void)cudaStreamSynchronize(stream_.get());
  if (comm_stream_) (void)cudaStreamSynchronize(comm_stream_.get());
}

Result<cudaStream_t> CudaDevice::comm_stream() {
  if (!comm_stream_) {
    GEXEC_CUDA_TRY(cudaSetDevice(ordinal_));
    auto s = make_stream();
    if (!s) return s.error();
    comm_stream_ = std::move(*s);
  }
  return comm_stream_.get();
}

Result<void*> CudaDevice::allocate_arena(int64_t bytes) {
  if (bytes < 0) return runtime_error("arena of negative size " + std::to_string(bytes) + " bytes requested");
  size_t free_b = 0, total_b = 0;
  GEXEC_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  // Refused before trying: a clear message rather than whatever cudaMalloc says.
  if (uint64_t(bytes) > uint64_t(free_b))
    return device_memory_short(caps_.name, bytes, int64_t(free_b), int64_t(total_b));
  auto m = DeviceMemory::allocate(size_t(bytes));
  if (!m) return m.error().with("allocating the arena of " + std::to_string(bytes) + " bytes");
  void* p = m->get();
  arenas_.push_back(std::move(*m));
  return p;
}

Result<std::shared_ptr<void>> CudaDevice::allocate_buffer(int64_t bytes) {
  if (bytes < 0) return runtime_error("buffer of negative size " + std::to_string(bytes) + " bytes requested");
  auto m = DeviceMemory::allocate(size_t(std::max<int64_t>(bytes, 1)));
  if (!m) return m.error().with("allocating a buffer of " + std::to_string(bytes) + " bytes");
  auto owner = std::make_shared<DeviceMemory>(std::move(*m));
  return std::shared_ptr<void>(owner, owner->get());
}

// cudaEventDisableTiming: these only order, and such events are the cheapest to record.
Status CudaDevice::wait_for_default_stream() {
  if (!from_default_) {
    auto e = make_event(cudaEventDisableTiming);
    if (!e) return e.error();
    from_default_ = std::move(*e);
  }
  GEXEC_CUDA_TRY(cudaEventRecord(from_default_.get(), cudaStreamLegacy));
  GEXEC_CUDA_TRY(cudaStreamWaitEvent(stream(), from_default_.get(), 0));
  return {};
}

namespace {

// A captured run: one cudaGraphLaunch instead of a launch per kernel.
class GraphReplay final : public Replay {
 public:
  GraphReplay(GraphExec exec, cudaStream_t stream) : exec_(std::move(exec)), stream_(stream) {}
  // Launches still pending use the graph: it goes only once they are done.
  ~GraphReplay() override { (void)cudaStreamSynchronize(stream_); }
  Status launch() override {
    GEXEC_CUDA_TRY(cudaGraphLaunch(exec_.get(), stream_));
    return {};
  }

 private:
  GraphExec exec_;
  cudaStream_t stream_;
};

}  // namespace

Result<std::unique_ptr<Replay>> CudaDevice::capture(const std::function<Status()>& enqueue, std::string* why) {
  auto exec = capture_run(stream(), enqueue, why);
  if (!exec) return exec.error();
  if (!*exec) return std::unique_ptr<Replay>();
  return std::unique_ptr<Replay>(std::make_unique<GraphReplay>(std::move(*exec), stream()));
}

Status CudaDevice::default_stream_waits() {
  if (!to_default_) {
    auto e = make_event(cudaEventDisableTiming);
    if (!e) return e.error();
    to_default_ = std::move(*e);
  }
  GEXEC_CUDA_TRY(cudaEventRecord(to_default_.get(), stream()));
  GEXEC_CUDA_TRY(cudaStreamWaitEvent(cudaStreamLegacy, to_default_.get(), 0));
  return {};
}

Result<void*> CudaDevice::gemm_workspace() {
  if (!workspace_.get()) {
    auto m = DeviceMemory::allocate(kGemmWorkspaceBytes);
    if (!m) return m.error().with("allocating the cuBLASLt workspace");
    workspace_ = std::move(*m);
  }
  return workspace_.get();
}

Status CudaDevice::fill_input(const Tensor& t, void* dst, uint64_t seed) {
  const Init init = effective_init(t);
  // f8 inputs are drawn in real units and divided by their scales, and i32 ones rounded to
  // integers: on the host, by generate_input.
  if (is_drawn(init) && !is_f8(t.dtype) && t.dtype != DType::i32) {
    Status s = launch_fill_random(dst, t.dtype, t.numel(), draw_params(init, seed, t), stream());
    if (!s) return s.error().with("drawing the values of " + t.name);
    // Waited for here, so that a failure is reported against the tensor that caused it.
    s = synchronize();
    if (!s) return s.error().with("drawing the values of " + t.name);
    return {};
  }
  const std::vector<uint8_t> bytes = generate_input(t, seed);
  Status s = upload(dst, bytes.data(), bytes.size());
  if (!s) return s.error().with("uploading the values of " + t.name);
  return {};
}

Status CudaDevice::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return {};
  return staged_.to_device(dst, src, bytes, stream());
}

Status CudaDevice::download(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return {};
  return staged_.to_host(dst, src, bytes, stream());
}

Status CudaDevice::poison(void* dst, size_t bytes) {
  if (bytes == 0) return {};
  GEXEC_CUDA_TRY(cudaMemsetAsync(dst, 0xFF, bytes, stream()));
  return {};
}

Result<std::unique_ptr<Kernel>> CudaDevice::make_kernel(const KernelDef& def, const Graph& g, const Op& op,
                                                        const Binding& binding, const KernelOptions& options) {
  if (def.backend != Backend::cuda || def.op != op.type)
    return runtime_error("kernel " + def.name + " cannot run op " + op.name + " on CUDA");
  if (def.impl == KernelImpl::cublaslt_gemm || def.impl == KernelImpl::cuda_skinny_gemm) {
    auto k = def.impl == KernelImpl::cublaslt_gemm ? make_cublaslt_gemm(*this, def, g, op, binding, options)
                                                   : make_skinny_gemm(*this, def, g, op, binding);
    if (!k) return k.error();
    // --autotune: the other family's kernel beside it, where it can run the op.
    auto other = make_alternative_gemm(*this, def, g, op, binding, options);
    if (!other) return other.error();
    if (!*other) return k;
    return make_gemm_alternatives(std::move(*k), std::move(*other));
  }
  switch (def.impl) {
    case KernelImpl::cuda_elementwise: return make_elementwise_kernel(def, g, op, binding, stream());
    case KernelImpl::cublaslt_fp8_gemm: return make_fp8_gemm(*this, g, op, binding, options);
    case KernelImpl::cuda_f8_cast: return make_f8_cast_kernel(g, op, binding, stream(), caps().sm_count);
    case KernelImpl::cuda_fused_elementwise: return make_fused_elementwise_kernel(def, g, op, binding, stream());
    case KernelImpl::cuda_grouped_gemm:
      if (op.type == OpType::GEMM_BIAS_ACT) return make_one_group_gemm(*this, def, g, op, binding);
      return make_grouped_gemm(*this, def, g, op, binding);
    case KernelImpl::cuda_grouped_gemm_mma: return make_grouped_gemm(*this, def, g, op, binding);
    case KernelImpl::nccl_collective: return make_nccl_collective(*this, g, op, binding);
    default: break;
  }
  return runtime_error("kernel " + def.name + " has no CUDA implementation");
}

Status CudaDevice::make_current() {
  GEXEC_CUDA_TRY(cudaSetDevice(ordinal_));
  return {};
}

Status CudaDevice::synchronize() {
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream()));
  GEXEC_CUDA_TRY(cudaGetLastError());
  return {};
}

Result<std::vector<double>> CudaDevice::time_runs(const std::function<Status()>& enqueue, const TimingOptions& opts,
                                                  bool* graph_used) {
  return time_on_stream(stream(), enqueue, opts, graph_used);
}

Result<double> CudaDevice::peak_tflops() { return measured_peak_tflops(ordinal(), stream(), cublaslt()); }

}  // namespace cuda

Result<std::unique_ptr<Device>> open_cuda_device(int ordinal) {
  auto d = cuda::CudaDevice::open(ordinal);
  if (!d) return d.error().with("opening CUDA device " + std::to_string(ordinal));
  return std::unique_ptr<Device>(std::move(*d));
}

Result<DeviceCaps> detect_cuda_caps(int ordinal) {
  if (Status s = cuda::check_ordinal(ordinal); !s) return s.error();
  const cudaError_t e = cudaSetDevice(ordinal);
  if (e != cudaSuccess) return cuda::cuda_error(e, "cudaSetDevice(ordinal)", __FILE__, __LINE__);
  auto c = cuda::read_caps(ordinal);
  if (!c) return c.error().with("reading the capabilities of CUDA device " + std::to_string(ordinal));
  return c;
}

CudaVersions read_cuda_versions() {
  CudaVersions v;
  int rt = 0, drv = 0;
  const cudaError_t rt_err = cudaRuntimeGetVersion(&rt);
  v.runtime = rt_err == cudaSuccess ? cuda::runtime_version(rt) : std::string("none (") + cudaGetErrorString(rt_err) + ")";
  const cudaError_t drv_err = cudaDriverGetVersion(&drv);
  v.driver = drv_err != cudaSuccess ? std::string("none (") + cudaGetErrorString(drv_err) + ")"
             : drv == 0             ? std::string("none (no CUDA driver is installed)")
                                    : cuda::runtime_version(drv);
  (void)cudaGetLastError();
  v.cublaslt = cuda::lt_version(cublasLtGetVersion());
  v.devices = cuda_device_count(&v.no_device);
  return v;
}

}  // namespace gexec
