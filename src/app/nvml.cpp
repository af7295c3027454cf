// NVML through dlopen: a handful of entry points declared here by their documented C signatures.
#include "gexec/app/nvml.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>

namespace gexec {
namespace {

using nvmlReturn = int;  // NVML_SUCCESS is 0
using nvmlDevice = void*;
constexpr unsigned kClockSm = 1, kClockMem = 2, kTempGpu = 0;

// The reason bits (nvml.h, nvmlClocksEventReason*), with names for the report.
struct Reason {
  uint64_t bit;
  const char* name;
};
constexpr Reason kReasons[] = {{0x1, "gpu_idle"},          {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
                               {0x8, "hw_slowdown"},       {0x10, "sync_boost"},         {0x20, "sw_thermal"},
                               {0x40, "hw_thermal"},       {0x80, "hw_power_brake"},     {0x100, "display_clock"}};

}  // namespace

struct Nvml::Api {
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*driver)(char*, unsigned) = nullptr;
  nvmlReturn (*by_index)(unsigned, nvmlDevice*) = nullptr;
  nvmlReturn (*uuid)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*clock)(nvmlDevice, unsigned, unsigned*) = nullptr;
  nvmlReturn (*max_clock)(nvmlDevice, unsigned, unsigned*) = nullptr;
  nvmlReturn (*power)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*limit)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*temp)(nvmlDevice, unsigned, unsigned*) = nullptr;
  nvmlReturn (*reasons)(nvmlDevice, unsigned long long*) = nullptr;
};

std::string throttle_names(uint64_t bits) {
  std::string out;
  for (const Reason& r : kReasons)
    if (bits & r.bit) out += (out.empty() ? "" : ",") + std::string(r.name);
  return out.empty() ? "none" : out;
}

bool power_capped(uint64_t bits) { return (bits & (0x4 | 0x80)) != 0; }

Nvml& Nvml::instance() {
  const char* lib = std::getenv("GEXEC_NVML_LIBRARY");
  static Nvml nvml(lib && *lib ? lib : "libnvidia-ml.so.1");
  return nvml;
}

Nvml::Nvml(const std::string& library) : api_(std::make_unique<Api>()) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    why_ = "cannot load " + library + (e ? std::string(": ") + e : "");
    return;
  }
  auto sym = [&](auto& fn, const char* name, const char* alt = nullptr) {
    void* p = dlsym(lib, name);
    if (!p && alt) p = dlsym(lib, alt);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    return p != nullptr;
  };
  bool ok = sym(api_->init, "nvmlInit_v2", "nvmlInit") && sym(api_->shutdown, "nvmlShutdown") &&
            sym(api_->by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
  sym(api_->driver, "nvmlSystemGetDriverVersion");
  sym(api_->uuid, "nvmlDeviceGetUUID");
  sym(api_->name, "nvmlDeviceGetName");
  sym(api_->clock, "nvmlDeviceGetClockInfo");
  sym(api_->max_clock, "nvmlDeviceGetMaxClockInfo");
  sym(api_->power, "nvmlDeviceGetPowerUsage");
  sym(api_->limit, "nvmlDeviceGetEnforcedPowerLimit");
  sym(api_->temp, "nvmlDeviceGetTemperature");
  sym(api_->reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!ok) {
    why_ = library + " lacks nvmlInit or nvmlDeviceGetHandleByIndex";
    dlclose(lib);
    return;
  }
  if (const nvmlReturn r = api_->init(); r != 0) {
    why_ = "nvmlInit failed (NVML error " + std::to_string(r) + "; no driver or no GPU?)";
    dlclose(lib);
    return;
  }
  lib_ = lib;
}

Nvml::~Nvml() {
  if (!lib_) return;
  api_->shutdown();
  dlclose(lib_);
}

void* Nvml::handle(int device) const {
  if (!lib_ || device < 0) return nullptr;
  nvmlDevice h = nullptr;
  return api_->by_index(unsigned(device), &h) == 0 ? h : nullptr;
}

std::string Nvml::driver() const {
  char buf[96] = {};
  return lib_ && api_->driver && api_->driver(buf, sizeof buf) == 0 ? buf : "";
}

std::string Nvml::uuid(int device) const {
  char buf[96] = {};
  void* h = handle(device);
  return h && api_->uuid && api_->uuid(h, buf, sizeof buf) == 0 ? buf : "";
}

std::string Nvml::name(int device) const {
  char buf[96] = {};
  void* h = handle(device);
  return h && api_->name && api_->name(h, buf, sizeof buf) == 0 ? buf : "";
}

unsigned Nvml::max_sm_mhz(int device) const {
  unsigned v = 0;
  void* h = handle(device);
  return h && api_->max_clock && api_->max_clock(h, kClockSm, &v) == 0 ? v : 0;
}

std::optional<GpuSample> Nvml::sample(int device) const {
  void* h = handle(device);
  if (!h) return std::nullopt;
  GpuSample s;
  unsigned v = 0;
  if (api_->clock && api_->clock(h, kClockSm, &v) == 0) s.sm_mhz = v;
  if (api_->clock && api_->clock(h, kClockMem, &v) == 0) s.mem_mhz = v;
  if (api_->power && api_->power(h, &v) == 0) s.power_w = v / 1000.0;  // milliwatts
  if (api_->limit && api_->limit(h, &v) == 0) s.power_limit_w = v / 1000.0;
  if (api_->temp && api_->temp(h, kTempGpu, &v) == 0) s.temp_c = v;
  unsigned long long bits = 0;
  if (api_->reasons && api_->reasons(h, &bits) == 0) s.throttle = bits;
  return s;
}

std::vector<std::string> PointPower::warnings() const {
  std::vector<std::string> out;
  if (!start || !end) return out;
  // 3%: boost clocks step by about 15 MHz around 1980; a fall of 60 MHz or more is throttling.
  const unsigned low = std::min(min_sm_mhz ? min_sm_mhz : end->sm_mhz, end->sm_mhz);
  if (start->sm_mhz > 0 && double(low) < 0.97 * double(start->sm_mhz))
    out.push_back("the SM clock fell from " + std::to_string(start->sm_mhz) + " to " + std::to_string(low) +
                  " MHz during the point (throttle reasons seen: " + throttle_names(throttle_seen) + ")");
  const double limit = end->power_limit_w;
  if (power_capped(throttle_seen) || (limit > 0 && max_power_w >= 0.97 * limit)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "the power limit was reached: up to %.0f W of %.0f W (%s)", max_power_w, limit,
                  throttle_names(throttle_seen).c_str());
    out.push_back(buf);
  }
  return out;
}

nlohmann::json power_json(const PointPower& p) {
  auto one = [](const std::optional<GpuSample>& s) -> nlohmann::json {
    if (!s) return nullptr;
    return {{"sm_mhz", s->sm_mhz},   {"mem_mhz", s->mem_mhz}, {"power_w", s->power_w},
            {"power_limit_w", s->power_limit_w}, {"temp_c", s->temp_c}, {"throttle", throttle_names(s->throttle)}};
  };
  return {{"start", one(p.start)},
          {"end", one(p.end)},
          {"min_sm_mhz", p.min_sm_mhz},
          {"max_power_w", p.max_power_w},
          {"throttle_seen", throttle_names(p.throttle_seen)},
          {"warnings", p.warnings()}};
}

void PowerWatch::start() {
  if (!nvml_.available() || running_.exchange(true)) return;
  p_ = {};
  p_.start = nvml_.sample(device_);
  if (!p_.start) {
    running_ = false;
    return;
  }
  p_.min_sm_mhz = p_.start->sm_mhz;
  p_.max_power_w = p_.start->power_w;
  p_.throttle_seen = p_.start->throttle;
  thread_ = std::thread([this] {
    while (running_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto s = nvml_.sample(device_);
      if (!s) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (s->sm_mhz) p_.min_sm_mhz = std::min(p_.min_sm_mhz ? p_.min_sm_mhz : s->sm_mhz, s->sm_mhz);
      p_.max_power_w = std::max(p_.max_power_w, s->power_w);
      p_.throttle_seen |= s->throttle;
    }
  });
}

PointPower PowerWatch::stop() {
  if (running_.exchange(false)) {
    if (thread_.joinable()) thread_.join();
    p_.end = nvml_.sample(device_);
    if (p_.end) {
      p_.max_power_w = std::max(p_.max_power_w, p_.end->power_w);
      p_.throttle_seen |= p_.end->throttle;
      if (p_.end->sm_mhz) p_.min_sm_mhz = std::min(p_.min_sm_mhz ? p_.min_sm_mhz : p_.end->sm_mhz, p_.end->sm_mhz);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  return p_;
}

nlohmann::json environment_json(int device) {
  Nvml& nvml = Nvml::instance();
  if (!nvml.available()) return {{"nvml", "unavailable: " + nvml.why_unavailable()}};
  nlohmann::json j = {{"nvml", "available"},
                      {"driver", nvml.driver()},
                      {"gpu", nvml.name(device)},
                      {"gpu_uuid", nvml.uuid(device)},
                      {"max_sm_mhz", nvml.max_sm_mhz(device)}};
  if (auto s = nvml.sample(device)) {
    j["sm_mhz"] = s->sm_mhz;
    j["mem_mhz"] = s->mem_mhz;
    j["power_w"] = s->power_w;
    j["power_limit_w"] = s->power_limit_w;
    j["temp_c"] = s->temp_c;
    j["throttle"] = throttle_names(s->throttle);
  }
  return j;
}

}  // namespace gexec
