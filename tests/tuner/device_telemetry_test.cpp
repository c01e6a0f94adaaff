// Device telemetry: NVML reason bits as text, throttle detection, and the
// "unknown" answer where nothing can be read (this machine: no NVML).
#include "tuner/worker/device_telemetry.h"

#include <gtest/gtest.h>

namespace tiletune::tuner {
namespace {

v1::DeviceState State(const std::string& throttle) {
  v1::DeviceState s;
  s.set_source("nvml");
  s.set_throttle(throttle);
  return s;
}

TEST(DeviceTelemetry, SlowdownReasonsAreNamedAndIdleIsNotOne) {
  EXPECT_EQ(ThrottleReasonText(0), "none");
  // GPU idle (0x1), application clocks (0x2), sync boost (0x10): no slowdown.
  EXPECT_EQ(ThrottleReasonText(0x1 | 0x2 | 0x10), "none");
  EXPECT_EQ(ThrottleReasonText(0x20), "sw_thermal");
  EXPECT_EQ(ThrottleReasonText(0x4 | 0x40 | 0x1), "sw_power_cap+hw_thermal");
  EXPECT_EQ(ThrottleReasonText(0x8 | 0x80), "hw_slowdown+hw_power_brake");
}

TEST(DeviceTelemetry, OnlyNamedSlowdownsCountAsThrottled) {
  EXPECT_FALSE(IsThrottled(State("none")));
  EXPECT_FALSE(IsThrottled(State("unknown")));
  EXPECT_TRUE(IsThrottled(State("hw_thermal")));
  EXPECT_TRUE(IsThrottled(State("sw_power_cap+hw_thermal")));
}

TEST(DeviceTelemetry, AMeasurementIsThrottledWhenEitherSampleWas) {
  auto before = State("sw_thermal");
  auto after = State("none");
  after.set_sm_clock_mhz(1980);
  const auto merged = MergeDeviceStates(before, after);
  EXPECT_EQ(merged.throttle(), "sw_thermal");
  EXPECT_EQ(merged.sm_clock_mhz(), 1980);
  EXPECT_EQ(MergeDeviceStates(State("hw_slowdown"), State("sw_thermal")).throttle(),
            "hw_slowdown+sw_thermal");
  EXPECT_EQ(MergeDeviceStates(State("none"), State("none")).throttle(), "none");
}

TEST(DeviceTelemetry, HostAndMissingNvmlAnswerUnknown) {
  const auto host = OpenDeviceTelemetry("host")->Sample();
  EXPECT_EQ(host.source(), "unknown");
  EXPECT_EQ(host.throttle(), "unknown");
  EXPECT_EQ(host.sm_clock_mhz(), 0);
  EXPECT_FALSE(IsThrottled(host));
  // On a machine without NVML (or its GPU) the CUDA reader says unknown too;
  // with NVML it reads real clocks.
  const auto cuda = OpenDeviceTelemetry("cuda")->Sample();
  if (cuda.source() == "nvml") {
    EXPECT_GT(cuda.sm_clock_mhz(), 0);
    EXPECT_NE(cuda.throttle(), "unknown");
  } else {
    EXPECT_EQ(cuda.source(), "unknown");
    EXPECT_EQ(cuda.throttle(), "unknown");
  }
}

}  // namespace
}  // namespace tiletune::tuner
