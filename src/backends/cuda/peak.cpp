// Measuring the peak GEMM rate once per device and caching it in peak.json.
#include "peak.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bare_gemm.hpp"
#include "cuda_device.hpp"
#include "elementwise.hpp"
#include "raii.hpp"

namespace gexec::cuda {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSize = 8192;    // M = N = K: large enough to reach the device's best rate
constexpr int kWarmups = 5;
constexpr int kSamples = 20;

// Empty when there is nowhere to cache (neither XDG_CACHE_HOME nor HOME set).
fs::path cache_file() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return fs::path(xdg) / "gexec" / "peak.json";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "gexec" / "peak.json";
  return {};
}

// The cache's entries; an empty object when the file is missing or unreadable.
nlohmann::json read_cache(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_object())
    return nlohmann::json::object();
  return j["entries"];
}

// Written to a temporary file and renamed, so that a reader never sees half a file.
void write_cache(const fs::path& file, const std::string& key, double tflops) {
  nlohmann::json entries = read_cache(file);
  entries[key] = tflops;
  const nlohmann::json j = {{"format", "gexec.peak"},
                            {"method", "median of " + std::to_string(kSamples) + " cuBLASLt f16 GEMMs of " +
                                           std::to_string(kSize) + "^3, f32 accumulation, TFLOP/s"},
                            {"entries", entries}};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec) fs::rename(tmp, file, ec);
  if (ec) spdlog::warn("could not cache the measured peak in {}: {}", file.string(), ec.message());
}

Result<std::string> cache_key(int ordinal) {
  cudaDeviceProp prop{};
  GEXEC_CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal));
  int rt = 0;
  GEXEC_CUDA_TRY(cudaRuntimeGetVersion(&rt));
  return std::string(prop.name) + " | CUDA runtime " + std::to_string(rt) + " | cuBLASLt " +
         std::to_string(cublasLtGetVersion());
}

Result<double> measure(cudaStream_t stream, cublasLtHandle_t lt) {
  const int64_t n = kSize;
  const size_t bytes = size_t(n * n) * 2;
  auto a = DeviceMemory::allocate(bytes), b = DeviceMemory::allocate(bytes), d = DeviceMemory::allocate(bytes);
  auto ws = DeviceMemory::allocate(kGemmWorkspaceBytes);
  if (!a) return a.error();
  if (!b) return b.error();
  if (!d) return d.error();
  if (!ws) return ws.error();
  // Random data: zeros would run faster than real data and overstate the peak.
  GEXEC_TRY(launch_fill_random(a->get(), DType::f16, n * n, {rng::Dist::normal, 0.0, 1.0, 0x7065616b41ull}, stream));
  GEXEC_TRY(launch_fill_random(b->get(), DType::f16, n * n, {rng::Dist::normal, 0.0, 1.0, 0x7065616b42ull}, stream));

  auto gemm = BareGemm::create(lt, n, n, n, nullptr, kGemmWorkspaceBytes);
  if (!gemm) return gemm.error().with("the f16 GEMM of the peak measurement");
  auto run = [&]() { return gemm->run(a->get(), b->get(), d->get(), ws->get(), stream); };
  std::vector<Event> marks;
  for (int i = 0; i <= kSamples; ++i) {
    auto e = make_event();
    if (!e) return e.error();
    marks.push_back(std::move(*e));
  }
  for (int i = 0; i < kWarmups; ++i) GEXEC_TRY(run());
  GEXEC_CUDA_TRY(cudaEventRecord(marks[0].get(), stream));
  for (int i = 0; i < kSamples; ++i) {
    GEXEC_TRY(run());
    GEXEC_CUDA_TRY(cudaEventRecord(marks[size_t(i) + 1].get(), stream));
  }
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  std::vector<float> ms(kSamples);
  for (int i = 0; i < kSamples; ++i)
    GEXEC_CUDA_TRY(cudaEventElapsedTime(&ms[size_t(i)], marks[size_t(i)].get(), marks[size_t(i) + 1].get()));
  std::sort(ms.begin(), ms.end());
  const double median_s = (double(ms[kSamples / 2 - 1]) + double(ms[kSamples / 2])) / 2 / 1000.0;
  if (!(median_s > 0)) return runtime_error("the peak measurement took no time");
  return 2.0 * double(n) * double(n) * double(n) / median_s / 1e12;
}

}  // namespace

Result<double> measured_peak_tflops(int device_ordinal, cudaStream_t stream, cublasLtHandle_t lt) {
  int current = -1;
  GEXEC_CUDA_TRY(cudaGetDevice(&current));
  if (current != device_ordinal)
    return runtime_error("measuring the peak of device " + std::to_string(device_ordinal) + " while device " +
                         std::to_string(current) + " is current");
  auto key = cache_key(device_ordinal);
  if (!key) return key.error();
  const fs::path file = cache_file();
  if (!file.empty()) {
    const nlohmann::json entries = read_cache(file);
    const auto it = entries.find(*key);
    if (it != entries.end() && it->is_number() && it->get<double>() > 0) return it->get<double>();
  }
  spdlog::info("measuring the device's peak f16 GEMM rate once ({}^3); cached in {}", kSize,
               file.empty() ? "nothing (no HOME)" : file.string());
  // The stream's earlier work is not part of the measurement.
  GEXEC_CUDA_TRY(cudaStreamSynchronize(stream));
  // On failure measure()'s buffers are freed by cudaFree, which waits for the device first.
  auto tflops = measure(stream, lt);
  if (!tflops) return tflops.error().with("measuring the peak GEMM rate");
  if (!file.empty()) write_cache(file, *key, *tflops);
  return tflops;
}

}  // namespace gexec::cuda
