#include "runtime/cuda/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include "tests/runtime/cuda/nvrtc_for_tests.h"

namespace tiletune::runtime::cuda {
namespace {

// A kernel that compiles only when its in-memory header is found.
constexpr const char* kScaleKernel = R"(#include "scale.h"
extern "C" __global__ void scale(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * TT_TEST_FACTOR;
}
)";

bool IsElf(const std::string& binary) {
  return binary.rfind(
             "\x7f"
             "ELF",
             0) == 0;
}

class Nvrtc : public NvrtcTest {};

TEST_F(Nvrtc, NamesItsVersion) {
  EXPECT_EQ(nvrtc_->name(), "nvrtc");
  EXPECT_TRUE(nvrtc_->version().starts_with("nvrtc 1")) << nvrtc_->version();
  EXPECT_NE(nvrtc_->library().find("libnvrtc.so"), std::string::npos);
}

TEST_F(Nvrtc, CompilesWithAnInMemoryHeaderToACubin) {
  const RtcOutput out = nvrtc_->Compile(
      kScaleKernel, "kernel.cu", {{"scale.h", "#define TT_TEST_FACTOR 3.0f\n"}}, {}, "sm_90");
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_TRUE(IsElf(out.binary));
  EXPECT_GT(out.binary.size(), 1000u);
  // --ptxas-options=-v puts the resource report in the log.
  EXPECT_NE(out.log.find("Compiling entry function 'scale' for 'sm_90'"), std::string::npos)
      << out.log;
}

TEST_F(Nvrtc, CompilesForTheArchSpecificTarget) {
  const RtcOutput out =
      nvrtc_->Compile(kScaleKernel, "kernel.cu", {{"scale.h", "#define TT_TEST_FACTOR 2.0f\n"}},
                      {"-std=c++17"}, "sm_90a");
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_TRUE(IsElf(out.binary));
  EXPECT_NE(out.log.find("for 'sm_90a'"), std::string::npos) << out.log;
}

TEST_F(Nvrtc, AMissingHeaderFails) {
  const RtcOutput out = nvrtc_->Compile(kScaleKernel, "kernel.cu", {}, {}, "sm_90");
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.binary.empty());
  EXPECT_NE(out.log.find("scale.h"), std::string::npos) << out.log;
}

TEST_F(Nvrtc, ASyntaxErrorFailsWithALogNamingTheLine) {
  const RtcOutput out =
      nvrtc_->Compile("extern \"C\" __global__ void broken(float* out) {\n  out[0] = 1.0f\n}\n",
                      "kernel.cu", {}, {}, "sm_90");
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.binary.empty());
  EXPECT_NE(out.log.find("kernel.cu(3): error"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << out.log;
}

TEST_F(Nvrtc, AnUnknownOptionFails) {
  const RtcOutput out =
      nvrtc_->Compile(kScaleKernel, "kernel.cu", {{"scale.h", "#define TT_TEST_FACTOR 1.0f\n"}},
                      {"--no-such-nvrtc-option"}, "sm_90");
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("NVRTC_ERROR_INVALID_OPTION"), std::string::npos) << out.log;
}

TEST_F(Nvrtc, RefusesATargetThatIsNotACubin) {
  const RtcOutput out = nvrtc_->Compile(
      kScaleKernel, "kernel.cu", {{"scale.h", "#define TT_TEST_FACTOR 1.0f\n"}}, {}, "compute_90");
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("compute_90"), std::string::npos) << out.log;
}

TEST(OpenNvrtc, IsTheRtcCompilerNamedNvrtc) {
  std::string why;
  auto compiler = OpenNvrtc(&why);
  if (!compiler) {
    EXPECT_NE(why.find("libnvrtc"), std::string::npos) << why;
    return;
  }
  EXPECT_EQ(compiler->name(), "nvrtc");
}

}  // namespace
}  // namespace tiletune::runtime::cuda
