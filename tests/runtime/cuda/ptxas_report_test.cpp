#include "runtime/cuda/ptxas_report.h"

#include <gtest/gtest.h>

#include "tests/runtime/cuda/nvrtc_for_tests.h"

namespace tiletune::runtime::cuda {
namespace {

// CUDA 12 style: properties on an indented line, shared and constant memory
// on the "Used" line, plus a called device function that spills.
constexpr const char* kCuda12Report =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z4gemmPfPKfS1_' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z4gemmPfPKfS1_\n"
    "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 168 registers, 32768 bytes smem, 400 bytes cmem[0]\n"
    "ptxas info    : Function properties for _Z6helperf\n"
    "    32 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Compiling entry function 'small' for 'sm_90'\n"
    "ptxas info    : Function properties for small\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 12 registers, 128 bytes smem, 356 bytes cmem[0]\n";

TEST(PtxasReport, ReadsTheNamedEntryOfAFixedSample) {
  const ResourceReport r = ParsePtxasReport(kCuda12Report, "_Z4gemmPfPKfS1_");
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.shared_memory_bytes, 32768);
  EXPECT_EQ(r.stack_bytes, 16);
  // Its own 8 + 12 and the device function's 4 + 4.
  EXPECT_EQ(r.spill_bytes, 28);

  const ResourceReport small = ParsePtxasReport(kCuda12Report, "small");
  EXPECT_EQ(small.registers, 12);
  EXPECT_EQ(small.shared_memory_bytes, 128);
  EXPECT_EQ(small.stack_bytes, 0);
  EXPECT_EQ(small.spill_bytes, 8);
}

TEST(PtxasReport, AnUnknownEntryGetsTheLargestFiguresOfAllEntries) {
  const ResourceReport r = ParsePtxasReport(kCuda12Report, "not_there");
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.shared_memory_bytes, 32768);
  EXPECT_EQ(r.spill_bytes, 28);
  EXPECT_EQ(r.stack_bytes, 16);
}

TEST(PtxasReport, CumulativeStackCountsCallees) {
  const ResourceReport r = ParsePtxasReport(
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 26 registers, used 0 barriers, 256 bytes cumulative stack size\n",
      "k");
  EXPECT_EQ(r.registers, 26);
  EXPECT_EQ(r.stack_bytes, 256);
  EXPECT_EQ(r.shared_memory_bytes, 0);
}

TEST(PtxasReport, ALogWithoutAReportIsEmpty) {
  const ResourceReport r = ParsePtxasReport("kernel.cu(3): error: expected a \";\"\n", "k");
  EXPECT_EQ(r.registers, 0);
  EXPECT_EQ(r.shared_memory_bytes, 0);
  EXPECT_EQ(r.spill_bytes, 0);
  EXPECT_EQ(r.stack_bytes, 0);
}

class PtxasReportFromNvrtc : public NvrtcTest {};

// 48 live values and a register cap of 24 force ptxas to spill.
constexpr const char* kSpillingKernel = R"(
extern "C" __global__ void spill(float* out, const float* in, int n) {
  float acc[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) acc[i] = in[i * n + threadIdx.x];
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int i = 0; i < 48; ++i) acc[i] = acc[i] * acc[(i + r + 1) % 48] + 1.0f;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 48; ++i) s += acc[i] * (i + 1);
  out[threadIdx.x] = s;
}
)";

TEST_F(PtxasReportFromNvrtc, SeesSpillsAndTheStackFrameOfARealCompile) {
  const RtcOutput out =
      nvrtc_->Compile(kSpillingKernel, "kernel.cu", {}, {"--maxrregcount=24"}, "sm_90");
  ASSERT_TRUE(out.ok) << out.log;
  const ResourceReport r = ParsePtxasReport(out.log, "spill");
  EXPECT_GT(r.registers, 0);
  EXPECT_LE(r.registers, 24);
  EXPECT_GT(r.spill_bytes, 0) << out.log;
  EXPECT_GT(r.stack_bytes, 0) << out.log;
}

TEST_F(PtxasReportFromNvrtc, SeesStaticSharedMemoryAndNoSpills) {
  const RtcOutput out = nvrtc_->Compile(R"(
extern "C" __global__ void reverse(float* data) {
  __shared__ float tile[256];
  tile[threadIdx.x] = data[threadIdx.x];
  __syncthreads();
  data[threadIdx.x] = tile[255 - threadIdx.x];
}
)",
                                        "kernel.cu", {}, {}, "sm_90");
  ASSERT_TRUE(out.ok) << out.log;
  const ResourceReport r = ParsePtxasReport(out.log, "reverse");
  EXPECT_GT(r.registers, 0);
  EXPECT_EQ(r.shared_memory_bytes, 1024) << out.log;
  EXPECT_EQ(r.spill_bytes, 0);
  EXPECT_EQ(r.stack_bytes, 0);
}

}  // namespace
}  // namespace tiletune::runtime::cuda
