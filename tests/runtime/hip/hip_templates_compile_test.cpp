#include <gtest/gtest.h>

#include "kernels/core/kernel_template.h"
#include "kernels/core/op_registry.h"
#include "runtime/hip/code_object_metadata.h"
#include "runtime/hip/hip_compile_plan.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tests/support/test_key.h"

namespace tiletune::runtime::hip {
namespace {

// Keys as a client writes them (tests/support/test_key.h).
const auto Key = [](const std::string& op, const std::vector<std::pair<std::string, int64_t>>& dims,
                    const std::vector<std::string>& chain = {}) {
  return testing::TestKey(op, dims, chain);
};

// The templates the HIP backend is handed compile, with its options, into
// wave64 code objects whose one parameter is the op's launch ABI struct.
TEST(HipTemplates, FirstVariantOfEachCompilesForGfx90a) {
  std::string why;
  auto compiler = OpenHiprtc(&why);
  if (!compiler) GTEST_SKIP() << why;
  for (const auto& key : {Key("gemm", {{"m", 256}, {"n", 256}, {"k", 256}}),
                          Key("softmax", {{"rows", 64}, {"cols", 1000}}),
                          Key("rmsnorm", {{"rows", 64}, {"cols", 1000}}),
                          Key("layernorm", {{"rows", 64}, {"cols", 1000}})}) {
    const kernels::KernelTemplate* t = kernels::FindKernelTemplate(key, "hip", &why);
    ASSERT_TRUE(t) << key.op() << ": " << why;
    const auto variants = t->Space(key).ValidVariants();
    ASSERT_FALSE(variants.empty()) << key.op();
    const kernels::KernelSource source = t->Source(key, variants[0]);
    const HipCompilePlan plan = PlanHipCompile(source, "gfx90a", "test", "tiletune-rtc");
    const auto argv = plan.command.argv("/w", "/w/kernel.hip", "/w/kernel.hsaco");
    const std::vector<std::string> options(argv.begin() + 6, argv.end());
    const RtcOutput out =
        compiler->Compile(source.code, "kernel.hip", source.headers, options, "gfx90a");
    ASSERT_TRUE(out.ok) << key.op() << " " << kernels::VariantString(variants[0]) << "\n"
                        << out.log;
    const KernelMetadata kernel = ReadKernelMetadata(out.binary, source.entry);
    EXPECT_EQ(kernel.wavefront_size, 64) << key.op();
    ASSERT_FALSE(kernel.arguments.empty()) << key.op();
    EXPECT_EQ(kernel.arguments[0].size, static_cast<int64_t>(kernels::OpSpecOf(key.op()).abi.size))
        << key.op();
  }
}

}  // namespace
}  // namespace tiletune::runtime::hip
