// Device telemetry: NVML reason bits as text, throttle detection, and the
// "unknown" answer, with its reason, where nothing can be read (this
// machine: no NVML, and ROCm SMI without an AMD GPU).
#include "tuner/worker/device_telemetry.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>

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

TEST(DeviceTelemetry, SmuThrottleMaskIsKeptRawAndAnySetBitIsASlowdown) {
  EXPECT_EQ(SmuThrottleText(0), "none");
  EXPECT_EQ(SmuThrottleText(0x5), "smu_throttle_0x00000005");
  EXPECT_EQ(SmuThrottleText(0x80000000u), "smu_throttle_0x80000000");
  EXPECT_FALSE(IsThrottled(State(SmuThrottleText(0))));
  EXPECT_TRUE(IsThrottled(State(SmuThrottleText(0x100))));
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
  std::string why = "stale";
  const auto host = OpenDeviceTelemetry("host", &why)->Sample();
  EXPECT_EQ(host.source(), "unknown");
  EXPECT_EQ(host.throttle(), "unknown");
  EXPECT_EQ(host.sm_clock_mhz(), 0);
  EXPECT_FALSE(IsThrottled(host));
  EXPECT_EQ(why, "") << "the host backend has no telemetry source to fail";
  // On a machine without NVML (or its GPU) the CUDA reader says unknown too,
  // and why; with NVML it reads real clocks.
  const auto cuda = OpenDeviceTelemetry("cuda", &why)->Sample();
  if (cuda.source() == "nvml") {
    EXPECT_GT(cuda.sm_clock_mhz(), 0);
    EXPECT_NE(cuda.throttle(), "unknown");
    EXPECT_EQ(why, "");
  } else {
    EXPECT_EQ(cuda.source(), "unknown");
    EXPECT_EQ(cuda.throttle(), "unknown");
    EXPECT_NE(why.find("NVML"), std::string::npos) << why;
  }
}

// No AMD GPU exists on the machines this runs on, so the ROCm SMI reader is
// exercised only as far as loading: with librocm-smi64-1 installed the
// library opens and rsmi_init fails (no /sys/class/drm) or finds no device;
// without it the load fails. Either way the answer is "unknown", promptly,
// with a reason naming ROCm SMI.
TEST(DeviceTelemetry, RocmSmiWithoutAnAmdGpuAnswersUnknownAndSaysWhy) {
  void* installed = ::dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
  std::string why;
  const auto started = std::chrono::steady_clock::now();
  const auto hip = OpenDeviceTelemetry("hip", &why)->Sample();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  if (hip.source() == "rocm_smi") GTEST_SKIP() << "an AMD GPU is present: " << why;
  EXPECT_EQ(hip.source(), "unknown");
  EXPECT_EQ(hip.throttle(), "unknown");
  EXPECT_EQ(hip.sm_clock_mhz(), 0);
  EXPECT_EQ(hip.temperature_c(), 0);
  ASSERT_TRUE(why.starts_with("ROCm SMI ")) << why;
  if (installed) {
    EXPECT_TRUE(why.find("rsmi_init failed") != std::string::npos ||
                why.find("sees 0 GPUs") != std::string::npos)
        << why;
  } else {
    EXPECT_NE(why.find("not loaded: librocm_smi64.so.1"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace tiletune::tuner
