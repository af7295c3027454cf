// Power and clocks from NVML, loaded at run time with dlopen: the build needs no NVML headers and
// a machine without the library (or without a GPU) still runs, with the figures left out.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace gexec {

// One reading of a GPU.
struct GpuSample {
  unsigned sm_mhz = 0, mem_mhz = 0;
  double power_w = 0, power_limit_w = 0;
  unsigned temp_c = 0;
  uint64_t throttle = 0;  // nvmlClocksEventReasons bits
};

// "sw_power_cap,hw_slowdown" for the bits set (idle and application-clock bits included); "none".
std::string throttle_names(uint64_t bits);
// Whether the bits say the power limit held the clocks back (software power cap, power brake).
bool power_capped(uint64_t bits);

// The library and one device. Each call reads NVML afresh; nothing is cached but the handles.
class Nvml {
 public:
  // The process's NVML, loaded on first use from GEXEC_NVML_LIBRARY or libnvidia-ml.so.1.
  static Nvml& instance();
  // Loads `library` (for tests); check available().
  explicit Nvml(const std::string& library);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return lib_ != nullptr; }
  const std::string& why_unavailable() const { return why_; }
  // Driver version, e.g. "580.65.06"; empty when unknown.
  std::string driver() const;
  // The GPU's UUID and name, by NVML index (the CUDA ordinal where CUDA_VISIBLE_DEVICES is unset).
  std::string uuid(int device) const;
  std::string name(int device) const;
  unsigned max_sm_mhz(int device) const;
  // A reading, or nothing when NVML or the device is unavailable.
  std::optional<GpuSample> sample(int device) const;

 private:
  struct Api;
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string why_;
  void* handle(int device) const;
};

// The device over one timed point: a reading at the start and at the end, and a thread that
// reads every 50 ms in between for the lowest SM clock, the highest power draw and every
// throttle reason seen.
struct PointPower {
  std::optional<GpuSample> start, end;
  unsigned min_sm_mhz = 0;
  double max_power_w = 0;
  uint64_t throttle_seen = 0;
  // The warnings the readings call for: the clock fell, the power limit was reached.
  std::vector<std::string> warnings() const;
};
nlohmann::json power_json(const PointPower& p);

class PowerWatch {
 public:
  PowerWatch(Nvml& nvml, int device) : nvml_(nvml), device_(device) {}
  ~PowerWatch() { stop(); }
  void start();          // no-op when NVML is unavailable or already started
  PointPower stop();     // the readings; idempotent

 private:
  Nvml& nvml_;
  int device_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::mutex mu_;
  PointPower p_;
};

// The environment for a report: driver, GPU name and UUID, clocks now; {"nvml": "unavailable: ..."}.
nlohmann::json environment_json(int device);

}  // namespace gexec
