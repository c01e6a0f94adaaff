// Every variant of the sm_90a attention families, for representative
// problems (odd lengths, GQA, causal and not, both layouts, head_dim 64 and
// 128), through NVRTC for sm_90a: no errors, no spills, no wgmma
// serialisation warning. Skips without NVRTC.
#include <gtest/gtest.h>

#include <set>

#include "runtime/cuda/cubin_compiler.h"
#include "runtime/cuda/ptxas_report.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tests/kernels/ops/attention/attention_sm90a_test_kernels.h"

namespace tiletune::kernels::attention {
namespace {

using testing::Family;
using testing::Problem;

void CompileAll(Family family, const std::vector<Sm90aAttentionProblem>& problems) {
  std::string why;
  const auto nvrtc = runtime::OpenNvrtc(&why);
  if (!nvrtc) GTEST_SKIP() << "no NVRTC: " << why;
  std::set<std::string> compiled;
  for (const auto& p : problems) {
    const auto kernels = testing::TestKernels(family, p);
    ASSERT_FALSE(kernels.empty()) << p.q_len << "x" << p.kv_len;
    for (const auto& k : kernels) {
      // The lengths are runtime values: one compile per distinct kernel.
      if (!compiled.insert(k.source.entry).second) continue;
      const runtime::cuda::CubinTarget target = runtime::cuda::CubinTargetFor(k.source, "sm_90");
      ASSERT_EQ(target.arch, "sm_90a") << k.source.entry;
      const runtime::RtcOutput out = nvrtc->Compile(k.source.code, k.source.entry + ".cu",
                                                    k.source.headers, target.options, target.arch);
      ASSERT_TRUE(out.ok) << k.source.entry << "\n" << out.log;
      const runtime::ResourceReport report =
          runtime::cuda::ParsePtxasReport(out.log, k.source.entry);
      EXPECT_GT(report.registers, 0) << k.source.entry << "\n" << out.log;
      EXPECT_EQ(report.spill_bytes, 0) << k.source.entry << "\n" << out.log;
      EXPECT_EQ(out.log.find("C7518"), std::string::npos) << k.source.entry << "\n" << out.log;
      EXPECT_EQ(out.log.find("arning"), std::string::npos) << k.source.entry << "\n" << out.log;
    }
  }
}

TEST(AttentionSm90aCompile, EveryPrefillVariant) {
  CompileAll(Family::kTmaWs, {Problem(2, 32, 8, 4097, 4097, 128, true, true, true),
                              Problem(2, 8, 8, 300, 257, 64, false, false, false),
                              Problem(2, 4, 1, 7, 1, 64, true, true, true),
                              Problem(2, 4, 2, 1, 7, 128, false, false, true)});
}

TEST(AttentionSm90aCompile, EveryDecodeVariant) {
  CompileAll(Family::kDecode, {Problem(2, 32, 8, 1, 32768, 128, false, true, true),
                               Problem(2, 32, 8, 16, 4097, 128, true, false, true),
                               Problem(2, 8, 2, 5, 7, 64, true, true, false)});
}

}  // namespace
}  // namespace tiletune::kernels::attention
