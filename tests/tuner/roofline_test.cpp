// The roofline figures of a measured time: achieved rates, the floor of the
// bound that binds, and which device ceilings apply.
#include "tuner/roofline.h"

#include <gtest/gtest.h>

#include "kernels/core/kernel_key.h"
#include "tests/support/test_key.h"

namespace tiletune::tuner {
namespace {

v1::DeviceCeilings Ceilings(double tflops, double tbps) {
  v1::DeviceCeilings ceilings;
  ceilings.set_peak_tflops(tflops);
  ceilings.set_peak_bandwidth_tbps(tbps);
  ceilings.set_source("test");
  return ceilings;
}

v1::KernelKey Key(const char* op, v1::DType dtype,
                  const std::vector<std::pair<std::string, int64_t>>& dims) {
  return testing::TestKey(op, dims, {}, dtype);
}

v1::DeviceFingerprint H200() {
  v1::DeviceFingerprint device;
  device.set_vendor("nvidia");
  device.set_arch("sm_90");
  device.set_name("NVIDIA H200");
  return device;
}

TEST(Roofline, AComputeBoundTimeIsMeasuredAgainstThePeakFlops) {
  // 2e12 FLOPs at 1000 TFLOP/s: a 2 ms floor; 1e9 bytes at 4 TB/s take only 0.25 ms.
  const auto r = RooflineOf(2'000'000'000'000, 1'000'000'000, 4000, Ceilings(1000, 4));
  EXPECT_EQ(r.flops(), 2'000'000'000'000);
  EXPECT_EQ(r.bytes(), 1'000'000'000);
  EXPECT_DOUBLE_EQ(r.achieved_tflops(), 500);
  EXPECT_DOUBLE_EQ(r.achieved_tbps(), 0.25);
  EXPECT_DOUBLE_EQ(r.fraction_of_floor(), 0.5);
  EXPECT_EQ(r.ceilings().source(), "test");
}

TEST(Roofline, AMemoryBoundTimeIsMeasuredAgainstThePeakBandwidth) {
  // 8e9 bytes at 4 TB/s: a 2 ms floor, measured in 2.5 ms.
  const auto r = RooflineOf(1'000'000'000, 8'000'000'000, 2500, Ceilings(1000, 4));
  EXPECT_DOUBLE_EQ(r.achieved_tbps(), 3.2);
  EXPECT_DOUBLE_EQ(r.fraction_of_floor(), 0.8);
}

TEST(Roofline, UnknownCeilingsKeepTheRatesButNoFraction) {
  const auto r = RooflineOf(1'000'000, 4'000'000, 10, std::nullopt);
  EXPECT_DOUBLE_EQ(r.achieved_tflops(), 0.1);
  EXPECT_DOUBLE_EQ(r.achieved_tbps(), 0.4);
  EXPECT_EQ(r.fraction_of_floor(), 0);
  EXPECT_FALSE(r.has_ceilings());
}

TEST(Roofline, NoTimeGivesNoFigures) {
  EXPECT_EQ(RooflineOf(1000, 1000, 0, Ceilings(1, 1)).ByteSizeLong(), 0u);
}

TEST(Roofline, TheH200sCeilingsFollowTheMathUnitAndNameTheirSource) {
  auto bf16_gemm = Key("gemm", v1::DTYPE_BF16, {{"m", 64}, {"n", 64}, {"k", 64}});
  auto tensor = KnownCeilings(H200(), bf16_gemm);
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor->peak_tflops(), 790);
  EXPECT_EQ(tensor->peak_bandwidth_tbps(), 4.24);
  EXPECT_NE(tensor->source().find("measured device-to-device copy 4.24 TB/s"), std::string::npos);

  auto f32_gemm = Key("gemm", v1::DTYPE_F32, {{"m", 64}, {"n", 64}, {"k", 64}});
  EXPECT_EQ(KnownCeilings(H200(), f32_gemm)->peak_tflops(), 67);
  f32_gemm.set_allow_tf32(true);
  EXPECT_EQ(KnownCeilings(H200(), f32_gemm)->peak_tflops(), 494);
  // Row ops compute in f32 whatever their storage type.
  auto rows = Key("rmsnorm", v1::DTYPE_BF16, {{"rows", 8}, {"cols", 1024}});
  EXPECT_EQ(KnownCeilings(H200(), rows)->peak_tflops(), 67);
}

TEST(Roofline, TheHostCpuHasNoCeilings) {
  v1::DeviceFingerprint cpu;
  cpu.set_vendor("cpu");
  cpu.set_arch("x86_64-avx2");
  cpu.set_name("AMD EPYC");
  auto key = Key("gemm", v1::DTYPE_F32, {{"m", 64}, {"n", 64}, {"k", 64}});
  EXPECT_FALSE(KnownCeilings(cpu, key));
  const auto r = RooflineOf(key, cpu, 10);
  EXPECT_DOUBLE_EQ(r.achieved_tflops(), 2.0 * 64 * 64 * 64 / 10 * 1e-6);
  EXPECT_EQ(r.bytes(), kernels::ProblemBytes(key));
  EXPECT_FALSE(r.has_ceilings());
}

TEST(Roofline, ABf16GemmOnTheH200UsesItsFlopsAndBytes) {
  auto key = Key("gemm", v1::DTYPE_BF16, {{"m", 4096}, {"n", 4096}, {"k", 4096}});
  // 1.37e11 FLOPs over 790 TFLOP/s is a 174 µs floor; measured in 193 µs.
  const auto r = RooflineOf(key, H200(), 193);
  EXPECT_NEAR(r.achieved_tflops(), 712, 1);
  EXPECT_NEAR(r.fraction_of_floor(), 2.0 * 4096 * 4096 * 4096 / 790e6 / 193, 1e-12);
}

}  // namespace
}  // namespace tiletune::tuner
