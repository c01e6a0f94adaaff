#include "runtime/hip/hip_compile_plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/hip/code_object_metadata.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tests/runtime/hip/hip_test_kernels.h"
#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime::hip {
namespace {

namespace fs = std::filesystem;

const std::string kVersion = "hiprtc 5.2 (libamdhip64.so.5.2.21153, libamd_comgr.so.2.4.0)";

std::string KeyOf(const kernels::KernelSource& source, const std::string& arch,
                  const std::string& version = kVersion) {
  return PlanHipCompile(source, arch, version, "tiletune-rtc").cache_key;
}

TEST(DefaultWavefrontSize, Is64OnGcnAndCdnaAnd32OnRdna) {
  EXPECT_EQ(DefaultWavefrontSize("gfx803"), 64);
  EXPECT_EQ(DefaultWavefrontSize("gfx908"), 64);
  EXPECT_EQ(DefaultWavefrontSize("gfx90a"), 64);
  EXPECT_EQ(DefaultWavefrontSize("gfx942"), 64);
  EXPECT_EQ(DefaultWavefrontSize("gfx1030"), 32);
  EXPECT_EQ(DefaultWavefrontSize("gfx1100"), 32);
  EXPECT_EQ(DefaultWavefrontSize("gfx1201"), 32);
  for (const char* other : {"sm_90", "gfx", "gfx9", "gfxabcd", "x86_64-avx2", ""}) {
    EXPECT_EQ(DefaultWavefrontSize(other), std::nullopt) << other;
  }
}

TEST(HipCompilePlan, CacheKeyNamesEverythingThatChangesTheCode) {
  const kernels::KernelSource base = testing::ArgsProbeSource();
  const std::string key = KeyOf(base, "gfx90a");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, KeyOf(base, "gfx90a")) << "the same inputs must give the same key";

  EXPECT_NE(key, KeyOf(base, "gfx942"));
  EXPECT_NE(key, KeyOf(base, "gfx90a", "hiprtc 6.2 (libhiprtc.so.6.2.60200)"));
  kernels::KernelSource changed = base;
  changed.compile_options = {"-O2"};
  EXPECT_NE(key, KeyOf(changed, "gfx90a"));
  changed = base;
  changed.code += "\n";
  EXPECT_NE(key, KeyOf(changed, "gfx90a"));
  changed = base;
  changed.headers[1].second = "#define PROBE_TILE 128\n";
  EXPECT_NE(key, KeyOf(changed, "gfx90a"));
  changed = base;
  changed.headers[1].first = "probe_config2.h";
  EXPECT_NE(key, KeyOf(changed, "gfx90a"));
  // Where the program lives and what the kernel is called do not change the
  // code object.
  changed = base;
  changed.kernel_name = "renamed";
  EXPECT_EQ(key, PlanHipCompile(changed, "gfx90a", kVersion, "/elsewhere/tiletune-rtc").cache_key);
}

TEST(HipCompilePlan, RunsTiletuneRtcWithTheSourceOptionsAndTheWaveSize) {
  kernels::KernelSource source = testing::ArgsProbeSource();
  source.compile_options = {"-O3", "-DTILE=64"};
  const HipCompilePlan plan = PlanHipCompile(source, "gfx1030", kVersion, "/opt/tt/tiletune-rtc");
  EXPECT_EQ(plan.command.what, "hiprtc");
  EXPECT_EQ(plan.command.source_file, "kernel.hip");
  EXPECT_EQ(plan.command.artifact_file, "kernel.hsaco");
  const std::vector<std::string> argv = plan.command.argv("/w", "/w/kernel.hip", "/w/kernel.hsaco");
  const std::vector<std::string> expected = {
      "/opt/tt/tiletune-rtc",  "hiprtc", "gfx1030", "/w/kernel.hip",
      "/w/kernel.hsaco",       "/w",     "-O3",     "-DTILE=64",
      "-DTT_WAVEFRONT_SIZE=32"};
  EXPECT_EQ(argv, expected);
}

TEST(HipCompilePlan, RejectsATargetThatIsNotAnAmdGpu) {
  EXPECT_THROW(PlanHipCompile(testing::ArgsProbeSource(), "sm_90", kVersion, "tiletune-rtc"),
               std::invalid_argument);
}

// The -D the plan adds must be the wave size hipRTC really compiles for, on
// both a wave64 (CDNA) and a wave32 (RDNA) target.
TEST(HipCompilePlan, WaveSizeMacroMatchesTheCompiler) {
  std::string why;
  auto compiler = OpenHiprtc(&why);
  if (!compiler) GTEST_SKIP() << why;
  kernels::KernelSource source;
  source.code =
      "static_assert(TT_WAVEFRONT_SIZE == __AMDGCN_WAVEFRONT_SIZE, \"wave size\");\n"
      "extern \"C\" __global__ void wave(int* out) { out[0] = warpSize; }\n";
  for (const std::string arch : {"gfx90a", "gfx1030"}) {
    const HipCompilePlan plan = PlanHipCompile(source, arch, compiler->version(), "tiletune-rtc");
    const auto argv = plan.command.argv("/w", "/w/kernel.hip", "/w/kernel.hsaco");
    const std::vector<std::string> options(argv.begin() + 6, argv.end());
    const RtcOutput out = compiler->Compile(source.code, "wave.hip", {}, options, arch);
    ASSERT_TRUE(out.ok) << arch << ": " << out.log;
    EXPECT_EQ(ReadKernelMetadata(out.binary, "wave").wavefront_size, DefaultWavefrontSize(arch))
        << arch;
  }
}

// The path the backend takes, short of a device: plan, then the shared
// cached compile running the real tiletune-rtc.
TEST(HipCompilePlan, CompilesThroughTheCacheWithTiletuneRtc) {
  std::string why;
  if (!OpenHiprtc(&why)) GTEST_SKIP() << why;
  testing::ScratchDir dir;
  CompiledCodeCache cache(dir.path() / "cache", int64_t{1} << 30, ".hsaco");
  const kernels::KernelSource source = testing::ArgsProbeSource();
  const HipCompilePlan plan =
      PlanHipCompile(source, "gfx90a", "test", TILETUNE_BUILD_DIR "/bin/tiletune-rtc");

  const CompileResult first = CompileThroughCache(cache, plan.cache_key, source, plan.command, {});
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(fs::path(first.artifact_path).extension(), ".hsaco");
  std::ifstream in(first.artifact_path, std::ios::binary);
  std::stringstream binary;
  binary << in.rdbuf();
  EXPECT_EQ(ReadKernelMetadata(binary.str(), source.entry).wavefront_size, 64);

  const CompileResult second = CompileThroughCache(cache, plan.cache_key, source, plan.command, {});
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.artifact_path, first.artifact_path);

  kernels::KernelSource broken = source;
  broken.code += "this is not HIP;\n";
  const HipCompilePlan broken_plan =
      PlanHipCompile(broken, "gfx90a", "test", TILETUNE_BUILD_DIR "/bin/tiletune-rtc");
  const CompileResult failed =
      CompileThroughCache(cache, broken_plan.cache_key, broken, broken_plan.command, {});
  EXPECT_FALSE(failed.ok);
  EXPECT_NE(failed.log.find("kernel.hip:12:"), std::string::npos) << failed.log;
  EXPECT_NE(failed.log.find("exit code 1"), std::string::npos) << failed.log;
}

TEST(UnsupportedHipArch, SaysRdnaIsNotSupported) {
  for (const std::string arch : {"gfx90a", "gfx942", "gfx950"}) {
    EXPECT_EQ(UnsupportedHipArch(arch), std::nullopt) << arch;
  }
  const auto why = UnsupportedHipArch("gfx1100");
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "gfx1100 (RDNA, wave32) is not supported: tiletune's HIP kernels are written for "
            "wave64 CDNA targets (gfx90a, gfx942, gfx950)");
}

TEST(HipDeviceCompilerFor, ClangServesOnlyWhatHiprtcCannot) {
  EXPECT_EQ(HipDeviceCompilerFor("gfx90a"), "hiprtc");
  EXPECT_EQ(HipDeviceCompilerFor("gfx1030"), "hiprtc");
  EXPECT_EQ(HipDeviceCompilerFor("gfx942"), "clang");
  EXPECT_EQ(HipDeviceCompilerFor("gfx950"), "clang");
  const HipCompilePlan plan =
      PlanHipCompile(testing::ArgsProbeSource(), "gfx942", "clang 22", "tiletune-rtc");
  EXPECT_EQ(plan.command.what, "clang");
  EXPECT_EQ(plan.command.argv("/w", "/w/kernel.hip", "/w/kernel.hsaco")[1], "clang");
}

// gfx942 and gfx950 through the real tiletune-rtc running clang, and the
// cache: a hit the second time, messages naming our source, a compile past
// its limit killed. Skips only where clang-22 is absent (CI installs it).
TEST(HipCompilePlan, ClangCompilesThroughTheCacheWithTiletuneRtc) {
  std::string why;
  const auto clang = OpenClangHip(&why);
  if (!clang && why.starts_with("no clang")) GTEST_SKIP() << why;
  ASSERT_TRUE(clang) << why;
  EXPECT_NE(clang->version().find("hipRTC preamble sha256:"), std::string::npos);
  EXPECT_NE(clang->version().find("device libraries sha256:"), std::string::npos);
  testing::ScratchDir dir;
  CompiledCodeCache cache(dir.path() / "cache", int64_t{1} << 30, ".hsaco");
  const kernels::KernelSource source = testing::ArgsProbeSource();
  for (const std::string arch : {"gfx942", "gfx950"}) {
    SCOPED_TRACE(arch);
    const HipCompilePlan plan =
        PlanHipCompile(source, arch, clang->version(), TILETUNE_BUILD_DIR "/bin/tiletune-rtc");
    EXPECT_NE(plan.cache_key, KeyOf(source, arch));
    const CompileResult first =
        CompileThroughCache(cache, plan.cache_key, source, plan.command, {});
    ASSERT_TRUE(first.ok) << first.log;
    EXPECT_FALSE(first.cache_hit);
    std::ifstream in(first.artifact_path, std::ios::binary);
    std::stringstream binary;
    binary << in.rdbuf();
    const KernelMetadata kernel = ReadKernelMetadata(binary.str(), source.entry);
    EXPECT_EQ(kernel.target, "amdgcn-amd-amdhsa--" + arch);
    EXPECT_EQ(kernel.wavefront_size, 64);
    EXPECT_TRUE(CompileThroughCache(cache, plan.cache_key, source, plan.command, {}).cache_hit);
  }

  kernels::KernelSource broken = source;
  broken.code += "this is not HIP;\n";
  const HipCompilePlan broken_plan =
      PlanHipCompile(broken, "gfx942", clang->version(), TILETUNE_BUILD_DIR "/bin/tiletune-rtc");
  const CompileResult failed =
      CompileThroughCache(cache, broken_plan.cache_key, broken, broken_plan.command, {});
  EXPECT_FALSE(failed.ok);
  EXPECT_NE(failed.log.find("kernel.hip:12:"), std::string::npos) << failed.log;
  EXPECT_NE(failed.log.find("exit code 1"), std::string::npos) << failed.log;

  CompileLimits instant;
  instant.timeout_seconds = 0.01;
  kernels::KernelSource other = source;
  other.code += "// not in the cache\n";
  const HipCompilePlan slow_plan =
      PlanHipCompile(other, "gfx950", clang->version(), TILETUNE_BUILD_DIR "/bin/tiletune-rtc");
  const CompileResult killed =
      CompileThroughCache(cache, slow_plan.cache_key, other, slow_plan.command, instant);
  EXPECT_FALSE(killed.ok);
  EXPECT_TRUE(killed.timed_out) << killed.log;
}

}  // namespace
}  // namespace tiletune::runtime::hip
