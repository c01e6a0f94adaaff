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
// GPU UUID). AMD: ROCm SMI (librocm_smi64, packaged in Debian as
// librocm-smi64-1) is the slot for the same readings and is not wired yet;
// like the host backend it reports "unknown".
class DeviceTelemetry {
 public:
  virtual ~DeviceTelemetry() = default;
  virtual v1::DeviceState Sample() = 0;
};

// A reader for `backend` ("cuda" gets NVML when it loads); one that answers
// "unknown" otherwise.
std::unique_ptr<DeviceTelemetry> OpenDeviceTelemetry(std::string_view backend);

// NVML clock-event reason bits as text: "none", or the slowdown reasons
// joined by '+'. Idle, application-clock and display reasons are not
// slowdowns and are left out.
std::string ThrottleReasonText(uint64_t reasons);

// Whether a sample shows a slowdown that makes a measurement untrustworthy.
// "unknown" is not a slowdown: without telemetry every measurement counts.
bool IsThrottled(const v1::DeviceState& state);

// The state to report for a measurement sampled before and after: the
// later clocks and temperature, the slowdown reasons of both.
v1::DeviceState MergeDeviceStates(const v1::DeviceState& before, const v1::DeviceState& after);

}  // namespace tiletune::tuner
