// `gexec --version`: the build's facts, then the versions read at run time. Lines are
// "key: value" so that scripts can check them (.ci/run checks "backends:" and "inputs:").
#include "gexec/app/version.hpp"

#include <sstream>

#include "gexec/app/model_file.hpp"
#include "gexec/build_info.hpp"
#if GEXEC_HAVE_CUDA
#include "gexec/backends/cuda_device.hpp"
#endif
#if GEXEC_HAVE_CPU
#include "gexec/backends/cpu_device.hpp"
#endif

namespace gexec {

std::string version_text() {
  const BuildInfo& b = build_info();
  std::ostringstream os;
  os << "gexec " << b.version << "\n";
  os << "commit: " << b.commit << (b.dirty ? " (dirty)" : "") << "\n";
  os << "build: " << b.build_type << ", " << b.cxx_compiler;
  if (!b.cuda_compiler.empty()) os << ", " << b.cuda_compiler;
  os << "\n";
  std::string backends = std::string(b.cuda ? "cuda " : "") + (b.cpu ? "cpu" : "");
  while (!backends.empty() && backends.back() == ' ') backends.pop_back();
  os << "backends: " << (backends.empty() ? "none" : backends) << "\n";
  os << "inputs: json" << (onnx_supported() ? " onnx" : "") << "\n";
  if (b.cuda) os << "cuda architectures: " << b.cuda_architectures << " (" << describe_fatbin() << ")\n";
#if GEXEC_HAVE_CUDA
  const CudaVersions v = read_cuda_versions();
  os << "cuda runtime: " << v.runtime << "\n";
  os << "cuda driver: " << v.driver << "\n";
  os << "cublaslt: " << v.cublaslt << "\n";
  os << "cuda devices: " << v.devices;
  if (v.devices == 0 && !v.no_device.empty()) os << " (" << v.no_device << ")";
  os << "\n";
#endif
#if GEXEC_HAVE_CPU
  os << "openblas: " << openblas_version() << "\n";
#endif
  std::string s = os.str();
  s.pop_back();  // CLI11 ends the text with its own newline
  return s;
}

}  // namespace gexec
