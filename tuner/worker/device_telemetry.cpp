#include "device_telemetry.h"

#include <cstdlib>
#include <set>
#include <sstream>
#include <utility>

#include "runtime/shared_library.h"

namespace tiletune::tuner {
namespace {

constexpr const char* kUnknown = "unknown";
constexpr const char* kNone = "none";

// The few NVML types and values used here, declared from NVML's documented
// C ABI so that no NVIDIA header is needed to build.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlClockMemory = 2;     // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

// nvmlClocksEventReason* bits that mean the clocks were pulled down.
struct ReasonBit {
  uint64_t bit;
  const char* name;
};
constexpr ReasonBit kSlowdownReasons[] = {
    {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},     {0x20, "sw_thermal"},
    {0x40, "hw_thermal"},  {0x80, "hw_power_brake"},
};

v1::DeviceState Unknown() {
  v1::DeviceState state;
  state.set_source(kUnknown);
  state.set_throttle(kUnknown);
  return state;
}

class UnknownTelemetry final : public DeviceTelemetry {
 public:
  v1::DeviceState Sample() override { return Unknown(); }
};

class NvmlTelemetry final : public DeviceTelemetry {
 public:
  // Null when NVML or the pinned device cannot be opened.
  static std::unique_ptr<NvmlTelemetry> Open() {
    std::string why;
    auto library = runtime::OpenSharedLibrary({"libnvidia-ml.so.1"}, "nvmlInit_v2", &why);
    if (!library) return nullptr;
    auto t = std::unique_ptr<NvmlTelemetry>(new NvmlTelemetry(std::move(*library)));
    if (!t->Resolve() || t->init_() != kNvmlSuccess) return nullptr;
    t->initialised_ = true;
    if (!t->FindPinnedDevice()) return nullptr;
    return t;
  }

  ~NvmlTelemetry() override {
    if (initialised_) shutdown_();
  }

  v1::DeviceState Sample() override {
    v1::DeviceState state;
    state.set_source("nvml");
    unsigned int value = 0;
    if (clock_(device_, kNvmlClockSm, &value) == kNvmlSuccess) state.set_sm_clock_mhz(value);
    if (clock_(device_, kNvmlClockMemory, &value) == kNvmlSuccess) {
      state.set_memory_clock_mhz(value);
    }
    if (temperature_(device_, kNvmlTemperatureGpu, &value) == kNvmlSuccess) {
      state.set_temperature_c(value);
    }
    unsigned long long reasons = 0;
    state.set_throttle(reasons_(device_, &reasons) == kNvmlSuccess ? ThrottleReasonText(reasons)
                                                                   : kUnknown);
    return state;
  }

 private:
  explicit NvmlTelemetry(runtime::SharedLibrary library) : library_(std::move(library)) {}

  bool Resolve() {
    std::string missing;
    // NVML 12.2 renamed "clocks throttle reasons" to "clocks event reasons";
    // older drivers have only the second name.
    const char* reasons = runtime::FindSymbol(library_, "nvmlDeviceGetCurrentClocksEventReasons")
                              ? "nvmlDeviceGetCurrentClocksEventReasons"
                              : "nvmlDeviceGetCurrentClocksThrottleReasons";
    bool ok = runtime::ResolveSymbol(library_, "nvmlInit_v2", &init_, &missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlShutdown", &shutdown_, &missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetHandleByIndex_v2", &by_index_, &missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetHandleByUUID", &by_uuid_, &missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetClockInfo", &clock_, &missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetTemperature", &temperature_, &missing);
    ok &= runtime::ResolveSymbol(library_, reasons, &reasons_, &missing);
    return ok;
  }

  // The worker sees one GPU: the first entry of CUDA_VISIBLE_DEVICES, an
  // index or a UUID. NVML ignores that variable and counts in PCI order.
  bool FindPinnedDevice() {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::string first = visible ? visible : "0";
    first = first.substr(0, first.find(','));
    if (first.starts_with("GPU-")) return by_uuid_(first.c_str(), &device_) == kNvmlSuccess;
    char* end = nullptr;
    const unsigned long index = std::strtoul(first.c_str(), &end, 10);
    if (end == first.c_str()) return false;
    return by_index_(static_cast<unsigned int>(index), &device_) == kNvmlSuccess;
  }

  runtime::SharedLibrary library_;
  bool initialised_ = false;
  NvmlDevice device_ = nullptr;
  NvmlReturn (*init_)() = nullptr;
  NvmlReturn (*shutdown_)() = nullptr;
  NvmlReturn (*by_index_)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*by_uuid_)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock_)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*temperature_)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*reasons_)(NvmlDevice, unsigned long long*) = nullptr;
};

std::set<std::string> Reasons(const std::string& text) {
  std::set<std::string> out;
  if (text == kNone || text == kUnknown || text.empty()) return out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, '+')) out.insert(part);
  return out;
}

}  // namespace

std::unique_ptr<DeviceTelemetry> OpenDeviceTelemetry(std::string_view backend) {
  if (backend == "cuda") {
    if (auto nvml = NvmlTelemetry::Open()) return nvml;
  }
  return std::make_unique<UnknownTelemetry>();
}

std::string ThrottleReasonText(uint64_t reasons) {
  std::string text;
  for (const auto& [bit, name] : kSlowdownReasons) {
    if (reasons & bit) text += (text.empty() ? "" : "+") + std::string(name);
  }
  return text.empty() ? kNone : text;
}

bool IsThrottled(const v1::DeviceState& state) {
  return !Reasons(state.throttle()).empty();
}

v1::DeviceState MergeDeviceStates(const v1::DeviceState& before, const v1::DeviceState& after) {
  v1::DeviceState merged = after;
  if (before.throttle() == kUnknown && after.throttle() == kUnknown) return merged;
  std::set<std::string> reasons = Reasons(before.throttle());
  reasons.merge(Reasons(after.throttle()));
  std::string text;
  for (const auto& r : reasons) text += (text.empty() ? "" : "+") + r;
  merged.set_throttle(text.empty() ? kNone : text);
  return merged;
}

}  // namespace tiletune::tuner
