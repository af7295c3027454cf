// Backend choice: --backend auto takes CUDA where a device is present, the CPU otherwise.
#include "target.hpp"

#if GEXEC_HAVE_CUDA
#include "gexec/backends/cuda_device.hpp"
#endif
#if GEXEC_HAVE_CPU
#include "gexec/backends/cpu_device.hpp"
#endif

namespace gexec {
namespace {

int cuda_devices(std::string* why) {
#if GEXEC_HAVE_CUDA
  return cuda_device_count(why);
#else
  *why = "this build has no CUDA backend";
  return 0;
#endif
}

Result<Target> cuda_target(const PrepareOptions& opts) {
  Target t;
  t.backend = Backend::cuda;
  std::string why;
  if (opts.dry_run) {
    const int count = cuda_devices(&why);
    if (opts.arch || count == 0) {
      auto caps = caps_for_arch(opts.arch.value_or("sm_90"));
      if (!caps) return caps.error();
      t.caps = *caps;
      return t;
    }
#if GEXEC_HAVE_CUDA
    // A plan for more devices than are here (--dry-run --tp 8 on one GPU): the others as device 0.
    const int ordinal = opts.device < count ? opts.device : 0;
    if (ordinal != opts.device)
      t.notice = "CUDA device " + std::to_string(opts.device) + " is not here (" + std::to_string(count) +
                 " device" + (count == 1 ? "" : "s") + "): planned as device 0";
    auto caps = detect_cuda_caps(ordinal);
    if (!caps) return caps.error();
    t.caps = *caps;
#endif
    return t;
  }
#if GEXEC_HAVE_CUDA
  auto dev = open_cuda_device(opts.device);
  if (!dev) return dev.error();
  t.device = std::move(*dev);
  t.caps = t.device->caps();
  return t;
#else
  return runtime_error("this build has no CUDA backend (configured with GEXEC_CUDA=OFF)");
#endif
}

Result<Target> cpu_target() {
#if GEXEC_HAVE_CPU
  Target t;
  t.backend = Backend::cpu;
  t.device = open_cpu_device();
  t.caps = t.device->caps();
  return t;
#else
  return runtime_error("this build has no CPU backend (no OpenBLAS was found when it was configured)");
#endif
}

}  // namespace

Status install_test_faults(const std::string& spec) {
#if GEXEC_HAVE_CUDA
  return configure_cuda_faults(spec);
#else
  (void)spec;
  return {};
#endif
}

Result<std::unique_ptr<ProductEngine>> open_device_reference(int ordinal) {
#if GEXEC_HAVE_CUDA
  return open_cuda_product_engine(ordinal);
#else
  (void)ordinal;
  return runtime_error("this build has no CUDA backend (configured with GEXEC_CUDA=OFF)");
#endif
}

Result<std::unique_ptr<ProductEngine>> open_reference_engine(BackendChoice backend, int ordinal,
                                                             std::string* note) {
  if (backend == BackendChoice::cpu) return std::unique_ptr<ProductEngine>();
  if (backend == BackendChoice::cuda) return open_device_reference(ordinal);
  std::string why;
  if (cuda_devices(&why) == 0) return std::unique_ptr<ProductEngine>();
  auto e = open_device_reference(ordinal);
  if (e) return e;
  if (note) *note = e.error().message;
  return std::unique_ptr<ProductEngine>();
}

void enable_tracing() {
#if GEXEC_HAVE_CUDA
  static const bool once = (enable_nvtx_ranges(), true);
  (void)once;
#endif
}

Result<Target> choose_target(const PrepareOptions& opts) {
  if (opts.backend == BackendChoice::cuda) return cuda_target(opts);
  if (opts.backend == BackendChoice::cpu) return cpu_target();
  std::string why;
  if (opts.dry_run || cuda_devices(&why) > 0) return cuda_target(opts);
  auto t = cpu_target();
  if (!t) return runtime_error("no CUDA device (" + why + ") and " + t.error().message);
  t->notice = "no CUDA device (" + why + "): running on the CPU backend";
  return t;
}

}  // namespace gexec
