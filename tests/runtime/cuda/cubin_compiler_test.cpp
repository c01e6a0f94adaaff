#include "runtime/cuda/cubin_compiler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/runtime/cuda/nvrtc_for_tests.h"
#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime::cuda {
namespace {

namespace fs = std::filesystem;

const std::string kRtcBinary = std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-rtc";

// A kernel that needs its header and, with a register cap of 24, spills.
kernels::KernelSource SpillingSource() {
  kernels::KernelSource s;
  s.kernel_name = "test_spill";
  s.entry = "spill";
  s.code = R"(#include "spill_width.h"
extern "C" __global__ void spill(float* out, const float* in, int n) {
  float acc[kWidth];
#pragma unroll
  for (int i = 0; i < kWidth; ++i) acc[i] = in[i * n + threadIdx.x];
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int i = 0; i < kWidth; ++i) acc[i] = acc[i] * acc[(i + r + 1) % kWidth] + 1.0f;
  float s = 0;
#pragma unroll
  for (int i = 0; i < kWidth; ++i) s += acc[i] * (i + 1);
  out[threadIdx.x] = s;
}
)";
  s.headers = {{"spill_width.h", "constexpr int kWidth = 48;\n"}};
  s.compile_options = {"--maxrregcount=24"};
  return s;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CubinTarget, IsTheDeviceArchUnlessTheSourceAsksForTheArchSpecificOne) {
  kernels::KernelSource source;
  source.compile_options = {"-std=c++17", "--use_fast_math"};
  CubinTarget plain = CubinTargetFor(source, "sm_90");
  EXPECT_EQ(plain.arch, "sm_90");
  EXPECT_EQ(plain.options, source.compile_options);

  source.compile_options.insert(source.compile_options.begin() + 1,
                                std::string(kArchSpecificOption));
  CubinTarget specific = CubinTargetFor(source, "sm_90");
  EXPECT_EQ(specific.arch, "sm_90a");
  EXPECT_EQ(specific.options, (std::vector<std::string>{"-std=c++17", "--use_fast_math"}));
  EXPECT_EQ(CubinTargetFor(source, "sm_90a").arch, "sm_90a");
}

TEST(CubinCompilerKey, ChangesWithEveryInputThatChangesTheCubin) {
  testing::ScratchDir dir;
  CubinCompiler compiler({dir.path(), int64_t{1} << 20, kRtcBinary}, "nvrtc 13.0");
  const kernels::KernelSource base = SpillingSource();
  const std::string key = compiler.CacheKey(base, "sm_90");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, compiler.CacheKey(base, "sm_90"));

  EXPECT_NE(key, compiler.CacheKey(base, "sm_80"));
  kernels::KernelSource changed = base;
  changed.compile_options.push_back(std::string(kArchSpecificOption));
  EXPECT_NE(key, compiler.CacheKey(changed, "sm_90"));
  // Asking for sm_90a is the same target as a device that is sm_90a.
  EXPECT_EQ(compiler.CacheKey(changed, "sm_90"), compiler.CacheKey(base, "sm_90a"));
  changed = base;
  changed.compile_options = {"--maxrregcount=32"};
  EXPECT_NE(key, compiler.CacheKey(changed, "sm_90"));
  changed = base;
  changed.code += "\n";
  EXPECT_NE(key, compiler.CacheKey(changed, "sm_90"));
  changed = base;
  changed.headers[0].second = "constexpr int kWidth = 40;\n";
  EXPECT_NE(key, compiler.CacheKey(changed, "sm_90"));

  testing::ScratchDir other_dir;
  CubinCompiler newer({other_dir.path(), int64_t{1} << 20, kRtcBinary}, "nvrtc 13.1");
  EXPECT_NE(key, newer.CacheKey(base, "sm_90"));
}

class CubinCompilerRun : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    NvrtcCompiler* nvrtc = TestNvrtc(&why);
    if (!nvrtc) GTEST_SKIP() << why;
    nvrtc_version_ = nvrtc->version();
  }
  std::string nvrtc_version_;
};

TEST_F(CubinCompilerRun, CompilesThroughTiletuneRtcAndKeepsTheReportForCacheHits) {
  testing::ScratchDir dir;
  CubinCompiler compiler({dir.path(), int64_t{1} << 30, kRtcBinary}, nvrtc_version_);
  const kernels::KernelSource source = SpillingSource();

  const CompileResult first = compiler.Compile(source, "sm_90", {});
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(first.cache_key, compiler.CacheKey(source, "sm_90"));
  EXPECT_EQ(fs::path(first.artifact_path), dir.path() / (first.cache_key + ".cubin"));
  EXPECT_EQ(ReadFile(first.artifact_path)
                .rfind("\x7f"
                       "ELF",
                       0),
            0u);
  EXPECT_NE(first.log.find("for 'sm_90'"), std::string::npos) << first.log;
  EXPECT_GT(first.resources.registers, 0);
  EXPECT_LE(first.resources.registers, 24);
  EXPECT_GT(first.resources.spill_bytes, 0) << first.log;

  const CompileResult second = compiler.Compile(source, "sm_90", {});
  ASSERT_TRUE(second.ok) << second.log;
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.artifact_path, first.artifact_path);
  EXPECT_EQ(second.resources.registers, first.resources.registers);
  EXPECT_EQ(second.resources.spill_bytes, first.resources.spill_bytes);
  EXPECT_EQ(second.resources.stack_bytes, first.resources.stack_bytes);

  // A new compiler over the same folder (a restarted daemon) still knows.
  CubinCompiler restarted({dir.path(), int64_t{1} << 30, kRtcBinary}, nvrtc_version_);
  const CompileResult third = restarted.Compile(source, "sm_90", {});
  EXPECT_TRUE(third.cache_hit);
  EXPECT_EQ(third.resources.spill_bytes, first.resources.spill_bytes);
}

TEST_F(CubinCompilerRun, TheArchSpecificTargetIsASeparateCompile) {
  testing::ScratchDir dir;
  CubinCompiler compiler({dir.path(), int64_t{1} << 30, kRtcBinary}, nvrtc_version_);
  kernels::KernelSource source = SpillingSource();
  source.compile_options = {std::string(kArchSpecificOption)};
  const CompileResult result = compiler.Compile(source, "sm_90", {});
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_FALSE(result.cache_hit);
  EXPECT_NE(result.log.find("for 'sm_90a'"), std::string::npos) << result.log;
  EXPECT_EQ(result.resources.spill_bytes, 0) << result.log;
}

TEST_F(CubinCompilerRun, ACompileErrorIsReportedWithTheLine) {
  testing::ScratchDir dir;
  CubinCompiler compiler({dir.path(), int64_t{1} << 30, kRtcBinary}, nvrtc_version_);
  kernels::KernelSource source = SpillingSource();
  source.code = "extern \"C\" __global__ void spill(float* out) {\n  out[0] = 1.0f\n}\n";
  const CompileResult result = compiler.Compile(source, "sm_90", {});
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.artifact_path.empty());
  EXPECT_NE(result.log.find("kernel.cu(3): error"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("exit code 1"), std::string::npos) << result.log;
}

TEST_F(CubinCompilerRun, AMissingRtcProgramIsACompileFailureNamingIt) {
  testing::ScratchDir dir;
  const std::string missing = (dir.path() / "no-such-tiletune-rtc").string();
  CubinCompiler compiler({dir.path(), int64_t{1} << 30, missing}, nvrtc_version_);
  const CompileResult result = compiler.Compile(SpillingSource(), "sm_90", {});
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("no-such-tiletune-rtc"), std::string::npos) << result.log;
}

}  // namespace
}  // namespace tiletune::runtime::cuda
