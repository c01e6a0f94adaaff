// The ways the baseline step runs a key's baseline, and how the kept one is
// named (no worker needed).
#include "tuner/baseline_step.h"

#include <gtest/gtest.h>

#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "tests/support/gemm_test_key.h"

namespace tiletune::tuner {
namespace {

using tiletune::testing::GemmTestKey;
constexpr auto B = v1::DTYPE_BF16;

std::vector<std::pair<std::string, bool>> Routes(const v1::KernelKey& key) {
  std::vector<std::pair<std::string, bool>> out;
  for (const BaselineRoute& r : BaselineRoutes(kernels::gemm::CublasLtBaseline(key))) {
    out.emplace_back(r.name, r.with_source);
  }
  return out;
}

TEST(BaselineRoutes, APlainGemmIsTheCublasLtCallAlone) {
  const auto key = GemmTestKey(77, 129, 65, 1, B, B, false, true);
  EXPECT_EQ(Routes(key), (std::vector<std::pair<std::string, bool>>{{"cublasLt", false}}));
}

TEST(BaselineRoutes, AChainCublasLtCanFuseRunsBothFusedAndWithThePass) {
  const auto key = GemmTestKey(77, 129, 65, 1, B, B, false, true, {"bias", "gelu_tanh"});
  EXPECT_EQ(Routes(key), (std::vector<std::pair<std::string, bool>>{
                             {"cublasLt", false}, {"cublasLt+gemm_epilogue_pass", true}}));
}

TEST(BaselineRoutes, AChainCublasLtCannotFuseRunsOnlyWithThePass) {
  const auto key = GemmTestKey(77, 129, 65, 1, B, B, false, true, {"bias", "gelu_erf"});
  EXPECT_EQ(Routes(key),
            (std::vector<std::pair<std::string, bool>>{{"cublasLt+gemm_epilogue_pass", true}}));
}

TEST(BaselineRoutes, AVendorCallWithoutAPassRunsAlone) {
  const kernels::Baseline library_only{.name = "openblas", .vendor_library = "openblas"};
  const auto routes = BaselineRoutes(library_only);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].name, "openblas");
  EXPECT_FALSE(routes[0].with_source);
}

TEST(BaselineRoutes, OurOwnBaselineRunsItsSource) {
  const kernels::Baseline naive{.name = "host-naive", .source = kernels::KernelSource{}};
  const auto routes = BaselineRoutes(naive);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].name, "host-naive");
  EXPECT_TRUE(routes[0].with_source);
}

TEST(TimedBaseline, ItsLabelNamesTheHeuristicsAlgorithmWhereItHasOne) {
  TimedBaseline baseline{.baseline = {.name = "cublasLt+gemm_epilogue_pass"}};
  EXPECT_EQ(baseline.label(), "cublasLt+gemm_epilogue_pass");
  baseline.algorithm.emplace();
  baseline.algorithm->set_heuristic_index(3);
  baseline.algorithm->set_heuristic_results(8);
  EXPECT_EQ(baseline.label(), "cublasLt+gemm_epilogue_pass algo 3 of 8");
}

}  // namespace
}  // namespace tiletune::tuner
