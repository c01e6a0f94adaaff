#include "device_telemetry.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "runtime/shared_library.h"

#if __has_include(<rocm_smi/rocm_smi.h>)
#include <rocm_smi/rocm_smi.h>
#define TILETUNE_HAVE_ROCM_SMI_HEADER 1
#endif

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

// The few ROCm SMI types and values used here, declared from rocm_smi.h of
// ROCm SMI 5.x (Debian's librocm-smi-dev 5.2.3) so that no AMD header is
// needed to build. ROCm 6 changed rsmi_frequencies_t and the metrics table,
// so only the 5.x sonames are opened.
using RsmiStatus = int;  // rsmi_status_t; 0 is RSMI_STATUS_SUCCESS
constexpr RsmiStatus kRsmiSuccess = 0;
constexpr int kRsmiClockSys = 0;                   // RSMI_CLK_TYPE_SYS
constexpr int kRsmiClockMemory = 4;                // RSMI_CLK_TYPE_MEM
constexpr int kRsmiTemperatureCurrent = 0;         // RSMI_TEMP_CURRENT
constexpr uint32_t kRsmiTemperatureEdge = 0;       // RSMI_TEMP_TYPE_EDGE
constexpr uint32_t kRsmiTemperatureJunction = 1;   // RSMI_TEMP_TYPE_JUNCTION
constexpr uint8_t kRsmiDiscreteMetricsFormat = 1;  // gpu_metrics v1.x: the layout below

struct RsmiFrequencies {  // rsmi_frequencies_t; frequencies in Hz
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[32];  // RSMI_MAX_NUM_FREQUENCIES
};

// rsmi_gpu_metrics_t: only its header and throttle_status are read. The
// throttle bits are the SMU firmware's and differ between ASICs.
struct alignas(8) RsmiGpuMetrics {
  uint16_t structure_size;
  uint8_t format_revision;
  uint8_t content_revision;
  unsigned char readings_before_throttle[64];
  uint32_t throttle_status;
  unsigned char readings_after_throttle[24];
};

v1::DeviceState Unknown() {
  v1::DeviceState state;
  state.set_source(kUnknown);
  state.set_throttle(kUnknown);
  return state;
}

// Entry `n` of a *_VISIBLE_DEVICES list; `n` itself when the variable is
// unset (every device visible), empty when the list is shorter.
std::string VisibleEntry(const char* visible, unsigned long n) {
  if (!visible || !*visible) return std::to_string(n);
  std::stringstream list(visible);
  std::string entry;
  for (unsigned long i = 0; std::getline(list, entry, ','); ++i) {
    if (i == n) return entry;
  }
  return "";
}

// `entry` as a device index; nullopt when it is no number (a UUID).
std::optional<unsigned long> DeviceIndex(const std::string& entry) {
  char* end = nullptr;
  const unsigned long index = std::strtoul(entry.c_str(), &end, 10);
  if (entry.empty() || *end) return std::nullopt;
  return index;
}

class UnknownTelemetry final : public DeviceTelemetry {
 public:
  v1::DeviceState Sample() override { return Unknown(); }
};

class NvmlTelemetry final : public DeviceTelemetry {
 public:
  // Null, with `why`, when NVML or the pinned device cannot be opened.
  static std::unique_ptr<NvmlTelemetry> Open(std::string* why) {
    std::string reasons;
    auto library = runtime::OpenSharedLibrary({"libnvidia-ml.so.1"}, "nvmlInit_v2", &reasons);
    if (!library) {
      *why = "NVML not loaded: " + reasons;
      return nullptr;
    }
    auto t = std::unique_ptr<NvmlTelemetry>(new NvmlTelemetry(std::move(*library)));
    std::string missing;
    if (!t->Resolve(&missing)) {
      *why = "NVML (" + t->library_.file + ") lacks " + missing;
      return nullptr;
    }
    if (const NvmlReturn status = t->init_(); status != kNvmlSuccess) {
      *why = "NVML nvmlInit_v2 failed with status " + std::to_string(status);
      return nullptr;
    }
    t->initialised_ = true;
    if (!t->FindPinnedDevice()) {
      *why = "NVML has no device for CUDA_VISIBLE_DEVICES entry '" +
             VisibleEntry(std::getenv("CUDA_VISIBLE_DEVICES"), 0) + "'";
      return nullptr;
    }
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

  bool Resolve(std::string* missing) {
    // NVML 12.2 renamed "clocks throttle reasons" to "clocks event reasons";
    // older drivers have only the second name.
    const char* reasons = runtime::FindSymbol(library_, "nvmlDeviceGetCurrentClocksEventReasons")
                              ? "nvmlDeviceGetCurrentClocksEventReasons"
                              : "nvmlDeviceGetCurrentClocksThrottleReasons";
    bool ok = runtime::ResolveSymbol(library_, "nvmlInit_v2", &init_, missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlShutdown", &shutdown_, missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetHandleByIndex_v2", &by_index_, missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetHandleByUUID", &by_uuid_, missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetClockInfo", &clock_, missing);
    ok &= runtime::ResolveSymbol(library_, "nvmlDeviceGetTemperature", &temperature_, missing);
    ok &= runtime::ResolveSymbol(library_, reasons, &reasons_, missing);
    return ok;
  }

  // The worker sees one GPU: the first entry of CUDA_VISIBLE_DEVICES, an
  // index or a UUID. NVML ignores that variable and counts in PCI order.
  bool FindPinnedDevice() {
    const std::string first = VisibleEntry(std::getenv("CUDA_VISIBLE_DEVICES"), 0);
    if (first.starts_with("GPU-")) return by_uuid_(first.c_str(), &device_) == kNvmlSuccess;
    const auto index = DeviceIndex(first);
    if (!index) return false;
    return by_index_(static_cast<unsigned int>(*index), &device_) == kNvmlSuccess;
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

class RocmSmiTelemetry final : public DeviceTelemetry {
 public:
  // Null, with `why`, when ROCm SMI or the pinned device cannot be opened.
  static std::unique_ptr<RocmSmiTelemetry> Open(std::string* why) {
    std::string reasons;
    auto library = runtime::OpenSharedLibrary({"librocm_smi64.so.1", "librocm_smi64.so.5"},
                                              "rsmi_init", &reasons);
    if (!library) {
      *why = "ROCm SMI not loaded: " + reasons;
      return nullptr;
    }
    auto t = std::unique_ptr<RocmSmiTelemetry>(new RocmSmiTelemetry(std::move(*library)));
    std::string missing;
    if (!t->Resolve(&missing)) {
      *why = "ROCm SMI (" + t->library_.file + ") lacks " + missing;
      return nullptr;
    }
    if (const RsmiStatus status = t->init_(0); status != kRsmiSuccess) {
      *why = "ROCm SMI rsmi_init failed: " + t->Describe(status);
      return nullptr;
    }
    t->initialised_ = true;
    if (!t->FindPinnedDevice(why)) return nullptr;
    return t;
  }

  ~RocmSmiTelemetry() override {
    if (initialised_) shut_down_();
  }

  v1::DeviceState Sample() override {
    v1::DeviceState state;
    state.set_source("rocm_smi");
    if (const auto mhz = CurrentClockMhz(kRsmiClockSys)) state.set_sm_clock_mhz(*mhz);
    if (const auto mhz = CurrentClockMhz(kRsmiClockMemory)) state.set_memory_clock_mhz(*mhz);
    // The junction (hotspot) sensor is the one the firmware throttles on;
    // older boards have only the edge sensor.
    int64_t millidegrees = 0;
    if (temperature_(device_, kRsmiTemperatureJunction, kRsmiTemperatureCurrent, &millidegrees) ==
            kRsmiSuccess ||
        temperature_(device_, kRsmiTemperatureEdge, kRsmiTemperatureCurrent, &millidegrees) ==
            kRsmiSuccess) {
      state.set_temperature_c(static_cast<int32_t>(millidegrees / 1000));
    }
    RsmiGpuMetrics metrics{};
    const bool has_throttle = metrics_(device_, &metrics) == kRsmiSuccess &&
                              metrics.format_revision == kRsmiDiscreteMetricsFormat;
    state.set_throttle(has_throttle ? SmuThrottleText(metrics.throttle_status) : kUnknown);
    return state;
  }

 private:
  explicit RocmSmiTelemetry(runtime::SharedLibrary library) : library_(std::move(library)) {}

  bool Resolve(std::string* missing) {
    bool ok = runtime::ResolveSymbol(library_, "rsmi_init", &init_, missing);
    ok &= runtime::ResolveSymbol(library_, "rsmi_shut_down", &shut_down_, missing);
    ok &= runtime::ResolveSymbol(library_, "rsmi_status_string", &status_string_, missing);
    ok &= runtime::ResolveSymbol(library_, "rsmi_num_monitor_devices", &count_, missing);
    ok &= runtime::ResolveSymbol(library_, "rsmi_dev_gpu_clk_freq_get", &clock_, missing);
    ok &= runtime::ResolveSymbol(library_, "rsmi_dev_temp_metric_get", &temperature_, missing);
    ok &= runtime::ResolveSymbol(library_, "rsmi_dev_gpu_metrics_info_get", &metrics_, missing);
    return ok;
  }

  std::string Describe(RsmiStatus status) const {
    const char* text = nullptr;
    const std::string code = "status " + std::to_string(status);
    if (status_string_(status, &text) != kRsmiSuccess || !text) return code;
    return code + " (" + text + ")";
  }

  // The worker sees one GPU: the first entry of HIP_VISIBLE_DEVICES, an
  // index into the GPUs ROCR_VISIBLE_DEVICES leaves visible (all when it is
  // unset). ROCm SMI ignores both variables and counts every GPU.
  bool FindPinnedDevice(std::string* why) {
    const std::string hip = VisibleEntry(std::getenv("HIP_VISIBLE_DEVICES"), 0);
    const auto hip_index = DeviceIndex(hip);
    const std::string rocr =
        hip_index ? VisibleEntry(std::getenv("ROCR_VISIBLE_DEVICES"), *hip_index) : "";
    const auto index = DeviceIndex(rocr);
    uint32_t count = 0;
    if (const RsmiStatus status = count_(&count); status != kRsmiSuccess) {
      *why = "ROCm SMI rsmi_num_monitor_devices failed: " + Describe(status);
      return false;
    }
    if (!index || *index >= count) {
      *why = "ROCm SMI sees " + std::to_string(count) +
             " GPUs and none for HIP_VISIBLE_DEVICES entry '" + hip + "'" +
             (std::getenv("ROCR_VISIBLE_DEVICES") ? " (ROCR_VISIBLE_DEVICES entry '" + rocr + "')"
                                                  : std::string());
      return false;
    }
    device_ = static_cast<uint32_t>(*index);
    return true;
  }

  // The current frequency in MHz, when the clock reports one.
  std::optional<int32_t> CurrentClockMhz(int clock) {
    RsmiFrequencies frequencies{};
    if (clock_(device_, clock, &frequencies) != kRsmiSuccess ||
        frequencies.current >= frequencies.num_supported ||
        frequencies.current >= std::size(frequencies.frequency)) {
      return std::nullopt;
    }
    return static_cast<int32_t>(frequencies.frequency[frequencies.current] / 1000000);
  }

  runtime::SharedLibrary library_;
  bool initialised_ = false;
  uint32_t device_ = 0;
  RsmiStatus (*init_)(uint64_t) = nullptr;
  RsmiStatus (*shut_down_)() = nullptr;
  RsmiStatus (*status_string_)(RsmiStatus, const char**) = nullptr;
  RsmiStatus (*count_)(uint32_t*) = nullptr;
  RsmiStatus (*clock_)(uint32_t, int, RsmiFrequencies*) = nullptr;
  RsmiStatus (*temperature_)(uint32_t, uint32_t, int, int64_t*) = nullptr;
  RsmiStatus (*metrics_)(uint32_t, RsmiGpuMetrics*) = nullptr;
};

std::set<std::string> Reasons(const std::string& text) {
  std::set<std::string> out;
  if (text == kNone || text == kUnknown || text.empty()) return out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, '+')) out.insert(part);
  return out;
}

#ifdef TILETUNE_HAVE_ROCM_SMI_HEADER
// Where librocm-smi-dev is installed, the declarations above are checked
// against its header.
static_assert(kRsmiSuccess == RSMI_STATUS_SUCCESS);
static_assert(kRsmiClockSys == RSMI_CLK_TYPE_SYS && kRsmiClockMemory == RSMI_CLK_TYPE_MEM);
static_assert(sizeof(rsmi_clk_type_t) == sizeof(int));
static_assert(kRsmiTemperatureCurrent == RSMI_TEMP_CURRENT);
static_assert(sizeof(rsmi_temperature_metric_t) == sizeof(int));
static_assert(kRsmiTemperatureEdge == RSMI_TEMP_TYPE_EDGE);
static_assert(kRsmiTemperatureJunction == RSMI_TEMP_TYPE_JUNCTION);
static_assert(sizeof(RsmiFrequencies) == sizeof(rsmi_frequencies_t));
static_assert(offsetof(RsmiFrequencies, current) == offsetof(rsmi_frequencies_t, current));
static_assert(offsetof(RsmiFrequencies, frequency) == offsetof(rsmi_frequencies_t, frequency));
static_assert(std::size(RsmiFrequencies{}.frequency) == RSMI_MAX_NUM_FREQUENCIES);
static_assert(sizeof(RsmiGpuMetrics) == sizeof(rsmi_gpu_metrics_t));
static_assert(alignof(RsmiGpuMetrics) == alignof(rsmi_gpu_metrics_t));
static_assert(offsetof(RsmiGpuMetrics, format_revision) ==
              offsetof(rsmi_gpu_metrics_t, common_header.format_revision));
static_assert(offsetof(RsmiGpuMetrics, throttle_status) ==
              offsetof(rsmi_gpu_metrics_t, throttle_status));
#endif

}  // namespace

std::unique_ptr<DeviceTelemetry> OpenDeviceTelemetry(std::string_view backend, std::string* why) {
  why->clear();
  if (backend == "cuda") {
    if (auto nvml = NvmlTelemetry::Open(why)) return nvml;
  } else if (backend == "hip") {
    if (auto rocm_smi = RocmSmiTelemetry::Open(why)) return rocm_smi;
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

std::string SmuThrottleText(uint32_t status) {
  if (status == 0) return kNone;
  char text[24];
  std::snprintf(text, sizeof text, "smu_throttle_0x%08x", status);
  return text;
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
