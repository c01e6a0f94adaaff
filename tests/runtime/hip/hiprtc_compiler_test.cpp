#include "runtime/hip/hiprtc_compiler.h"

#include <gtest/gtest.h>

#include "kernels/ops/rmsnorm/rmsnorm_args.h"
#include "runtime/hip/code_object_metadata.h"
#include "tests/runtime/hip/hip_test_kernels.h"

namespace tiletune::runtime::hip {
namespace {

// hipRTC is present on the CI machine (Debian's ROCm 5.2); elsewhere these
// tests say why they do not run.
class Hiprtc : public ::testing::Test {
 protected:
  void SetUp() override {
    compiler_ = OpenHiprtc(&why_);
    if (!compiler_) GTEST_SKIP() << why_;
  }
  std::string why_;
  std::unique_ptr<RtcCompiler> compiler_;
};

bool IsCodeObject(const std::string& binary) {
  return binary.starts_with(
             "\x7f"
             "ELF") ||
         binary.starts_with("__CLANG_OFFLOAD_BUNDLE__");
}

TEST_F(Hiprtc, NamesItsBuild) {
  EXPECT_EQ(compiler_->name(), "hiprtc");
  const std::string version = compiler_->version();
  EXPECT_EQ(version.rfind("hiprtc ", 0), 0u) << version;
  EXPECT_TRUE(version.find("libamdhip64.so.") != std::string::npos ||
              version.find("libhiprtc.so.") != std::string::npos)
      << version;
  EXPECT_NE(version.find("comgr"), std::string::npos) << version;
}

TEST_F(Hiprtc, CompilesForGfx90aWithInMemoryHeaders) {
  const kernels::KernelSource source = testing::ArgsProbeSource();
  const RtcOutput out =
      compiler_->Compile(source.code, "probe.hip", source.headers, {"-O3"}, "gfx90a");
  ASSERT_TRUE(out.ok) << out.log;
  ASSERT_FALSE(out.binary.empty());
  EXPECT_TRUE(IsCodeObject(out.binary));

  const KernelMetadata kernel = ReadKernelMetadata(out.binary, "tt_args_probe");
  EXPECT_NE(kernel.target.find("gfx90a"), std::string::npos) << kernel.target;
  EXPECT_EQ(kernel.wavefront_size, 64);
  EXPECT_EQ(kernel.group_segment_fixed_size, 256 * 4) << "the static LDS tile";
  EXPECT_GT(kernel.vgpr_count, 0);
  // The host's struct and the device's parameter agree: one by-value
  // argument of exactly sizeof(tt_rmsnorm_args) at offset 0.
  ASSERT_FALSE(kernel.arguments.empty());
  EXPECT_EQ(kernel.arguments[0].value_kind, "by_value");
  EXPECT_EQ(kernel.arguments[0].offset, 0);
  EXPECT_EQ(kernel.arguments[0].size, static_cast<int64_t>(sizeof(tt_rmsnorm_args)));
  EXPECT_GE(kernel.kernarg_segment_size, static_cast<int64_t>(sizeof(tt_rmsnorm_args)));
}

TEST_F(Hiprtc, SyntaxErrorFailsWithALogNamingTheLine) {
  const std::string code =
      "#include \"answer.h\"\n"
      "extern \"C\" __global__ void broken(float* x) {\n"
      "  x[threadIdx.x] = ANSWER +;\n"
      "}\n";
  const RtcOutput out = compiler_->Compile(code, "broken.hip",
                                           {{"answer.h", "#define ANSWER 42.0f\n"}}, {}, "gfx90a");
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.binary.empty());
  EXPECT_NE(out.log.find("broken.hip:3:"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("error"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("hiprtcCompileProgram"), std::string::npos) << out.log;
  EXPECT_EQ(out.log.find("CompileSource"), std::string::npos) << out.log;
}

TEST_F(Hiprtc, MissingHeaderFailsNamingIt) {
  const RtcOutput out =
      compiler_->Compile("#include \"absent_header.h\"\n", "lonely.hip", {}, {}, "gfx90a");
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("absent_header.h"), std::string::npos) << out.log;
}

}  // namespace
}  // namespace tiletune::runtime::hip
