#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tiletune/v1/records.pb.h"

namespace tiletune::tuner {

// Reads the clocks, temperature and throttle state of the worker's device, so
// that each measurement says under which conditions it was taken.
//
// NVIDIA: NVML (libnvidia-ml.so.1) opened with dlopen; the device is the one
// CUDA_VISIBLE_DEVICES pins the worker to (an index in NVML's PCI order, or a
// GPU UUID). AMD: ROCm SMI 5.x (librocm_smi64.so.1 from Debian's
// librocm-smi64-1, or .so.5 from AMD's ROCm 5) opened with dlopen; the device
// is the one HIP_VISIBLE_DEVICES (within ROCR_VISIBLE_DEVICES) pins the worker
// to, as an index in ROCm SMI's order: system clock, memory clock, junction
// (else edge) temperature, and the SMU throttle mask of the gpu_metrics
// table, which is reported raw because its bits differ between ASICs. The
// ROCm SMI path is verified only by loading the library on a machine without
// an AMD GPU, never on one. The host backend reports "unknown".
class DeviceTelemetry {
 public:
  virtual ~DeviceTelemetry() = default;
  virtual v1::DeviceState Sample() = 0;
};

// A reader for `backend` ("cuda" gets NVML, "hip" ROCm SMI, when it loads
// and finds the worker's device); otherwise one that answers "unknown", with
// `why` naming the library and what failed (empty for backends without a
// telemetry source, such as "host").
std::unique_ptr<DeviceTelemetry> OpenDeviceTelemetry(std::string_view backend, std::string* why);

// NVML clock-event reason bits as text: "none", or the slowdown reasons
// joined by '+'. Idle, application-clock and display reasons are not
// slowdowns and are left out.
std::string ThrottleReasonText(uint64_t reasons);

// ROCm SMI's throttle_status (the SMU firmware's mask) as text: "none", or
// the raw mask as smu_throttle_0x%08x. Its bits differ between ASICs, so
// they are not named, and any set bit counts as a slowdown.
std::string SmuThrottleText(uint32_t status);

// Whether a sample shows a slowdown that makes a measurement untrustworthy.
// "unknown" is not a slowdown: without telemetry every measurement counts.
bool IsThrottled(const v1::DeviceState& state);

// The state to report for a measurement sampled before and after: the
// later clocks and temperature, the slowdown reasons of both.
v1::DeviceState MergeDeviceStates(const v1::DeviceState& before, const v1::DeviceState& after);

}  // namespace tiletune::tuner
