// NVRTC compilation to a cubin for the current device (sm_XY), loaded with cudaLibraryLoadData;
// a process-wide cache keyed by architecture and source (nvrtc_kernel.hpp).
#include "nvrtc_kernel.hpp"

#include <nvrtc.h>

#include <chrono>
#include <map>
#include <mutex>
#include <vector>

#include "check.hpp"

namespace gexec::cuda {
namespace {

// nvrtcProgram owned for the length of one compile.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) (void)nvrtcDestroyProgram(&p);
  }
};

Error nvrtc_error(nvrtcResult r, const char* call) {
  return runtime_error(std::string(call) + " failed: " + nvrtcGetErrorString(r));
}

#define GEXEC_NVRTC_TRY(call)                                  \
  do {                                                         \
    const nvrtcResult gexec_nvrtc_r_ = (call);                 \
    if (gexec_nvrtc_r_ != NVRTC_SUCCESS) return nvrtc_error(gexec_nvrtc_r_, #call); \
  } while (0)

}  // namespace

Result<std::vector<char>> nvrtc_compile(const std::string& source, int major, int minor) {
  Program prog;
  const char* headers[] = {kActivationsCuh};
  const char* names[] = {"activations.cuh"};
  GEXEC_NVRTC_TRY(nvrtcCreateProgram(&prog.p, source.c_str(), "gexec_generated.cu", 1, headers, names));
  const std::string arch = "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
  const char* opts[] = {arch.c_str(), "--std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog.p, 2, opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog.p, &n) == NVRTC_SUCCESS && n > 1) {
      log.resize(n);
      if (nvrtcGetProgramLog(prog.p, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    return runtime_error(std::string("NVRTC could not compile the generated kernel for ") + arch.substr(21) + ": " +
                         nvrtcGetErrorString(r) + (log.empty() ? "" : ": " + log));
  }
  size_t bytes = 0;
  GEXEC_NVRTC_TRY(nvrtcGetCUBINSize(prog.p, &bytes));
  std::vector<char> cubin(bytes);
  GEXEC_NVRTC_TRY(nvrtcGetCUBIN(prog.p, cubin.data()));
  return cubin;
}

NvrtcKernel::~NvrtcKernel() { (void)cudaLibraryUnload(lib_); }

Result<std::shared_ptr<const NvrtcKernel>> NvrtcKernel::get(const std::string& source, const std::string& entry) {
  int dev = 0, major = 0, minor = 0;
  GEXEC_CUDA_TRY(cudaGetDevice(&dev));
  GEXEC_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  GEXEC_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  const std::string key = std::to_string(major * 10 + minor) + "\n" + entry + "\n" + source;
  // Kept weakly: the library lives while an executor uses it, and a later executor of the same
  // source in this process finds it still loaded or compiles it again.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const NvrtcKernel>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = cache[key].lock()) return hit;
  const auto start = std::chrono::steady_clock::now();
  auto cubin = nvrtc_compile(source, major, minor);
  if (!cubin) return cubin.error();
  cudaLibrary_t lib = nullptr;
  GEXEC_CUDA_TRY(cudaLibraryLoadData(&lib, cubin->data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t k = nullptr;
  if (const cudaError_t e = cudaLibraryGetKernel(&k, lib, entry.c_str()); e != cudaSuccess) {
    (void)cudaLibraryUnload(lib);
    return cuda_error(e, "cudaLibraryGetKernel(&k, lib, entry)", __FILE__, __LINE__);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::shared_ptr<const NvrtcKernel> made(new NvrtcKernel(lib, k, ms));
  cache[key] = made;
  return made;
}

Status NvrtcKernel::launch(dim3 grid, dim3 block, const void* param, cudaStream_t stream) const {
  void* args[] = {const_cast<void*>(param)};
  // A cudaKernel_t is accepted where the runtime takes a kernel function (cuda_runtime_api.h).
  GEXEC_CUDA_TRY(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), grid, block, args, 0, stream));
  return {};
}

}  // namespace gexec::cuda
