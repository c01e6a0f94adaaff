// cuBLASLt plans on a real GPU: the heuristic's algorithms by index, a
// chosen algorithm planned again, and a chosen one this library refuses
// replaced by the heuristic's first, saying why. Skips where libcuda, a
// device or cuBLASLt is missing.
#include "runtime/cuda/cublaslt_gemm.h"

#include <gtest/gtest.h>

#include <set>

#include "runtime/cuda/cuda_executor.h"
#include "tests/support/gemm_test_key.h"

namespace tiletune::runtime::cuda {
namespace {

using tiletune::testing::GemmTestKey;
constexpr auto B = v1::DTYPE_BF16;
constexpr int kAsked = 8;

class CublasLtPlans : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    // The executor makes the device's primary context current.
    executor_ = CudaExecutor::Open(&why);
    if (!executor_) GTEST_SKIP() << "no CUDA device: " << why;
    library_ = CublasLtLibrary::Open(&why);
    if (!library_) GTEST_SKIP() << why;
  }

  CublasLtGemm Plan(const CublasLtAlgorithmChoice& choice) const {
    return CublasLtGemm(*library_, spec_, nullptr, choice);
  }

  std::unique_ptr<CudaExecutor> executor_;
  std::unique_ptr<CublasLtLibrary> library_;
  const CublasLtGemmSpec spec_ =
      CublasLtGemmSpecOf(GemmTestKey(256, 512, 128, 1, B, B, false, true));
};

TEST_F(CublasLtPlans, EachOfTheHeuristicsAlgorithmsByIndex) {
  const int offered = Plan({.heuristic_requested = kAsked}).algorithm().heuristic_results();
  ASSERT_GE(offered, 1);
  ASSERT_LE(offered, kAsked);
  std::set<std::string> distinct;
  for (int index = 0; index < offered; ++index) {
    const CublasLtGemm plan = Plan({.heuristic_requested = kAsked, .heuristic_index = index});
    const v1::VendorAlgorithm& a = plan.algorithm();
    EXPECT_EQ(a.heuristic_index(), index);
    EXPECT_EQ(a.heuristic_results(), offered);
    EXPECT_EQ(a.algo().size(), 64u);
    EXPECT_EQ(a.library_version(), static_cast<int64_t>(library_->api().cublasLtGetVersion()));
    EXPECT_FALSE(a.epilogue_pass());
    EXPECT_LE(a.workspace_bytes(), static_cast<int64_t>(CublasLtGemm::kWorkspaceBytes));
    EXPECT_EQ(a.description().rfind("cublasLt algo " + std::to_string(index) + " of " +
                                        std::to_string(offered) + " (plain product, workspace ",
                                    0),
              0u)
        << a.description();
    EXPECT_NE(a.description().find(", id "), std::string::npos) << a.description();
    distinct.insert(a.algo());
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(offered));
  try {
    Plan({.heuristic_requested = kAsked, .heuristic_index = offered});
    FAIL() << "algo " << offered << " of " << offered << " planned";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("offered " + std::to_string(offered) + " algorithms"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CublasLtPlans, AChosenAlgorithmIsPlannedAgainAsItWas) {
  const v1::VendorAlgorithm last = [&] {
    const int offered = Plan({.heuristic_requested = kAsked}).algorithm().heuristic_results();
    return Plan({.heuristic_requested = kAsked, .heuristic_index = offered - 1}).algorithm();
  }();
  const CublasLtGemm again = Plan({.chosen = &last});
  EXPECT_EQ(again.algorithm().algo(), last.algo());
  EXPECT_EQ(again.algorithm().heuristic_index(), last.heuristic_index());
  EXPECT_EQ(again.algorithm().description(), last.description());
}

TEST_F(CublasLtPlans, ARefusedChoiceRunsTheHeuristicsFirstAndSaysWhy) {
  const v1::VendorAlgorithm first = Plan({}).algorithm();
  v1::VendorAlgorithm chosen =
      Plan({.heuristic_requested = kAsked, .heuristic_index = 0}).algorithm();
  const auto expect_refused = [&](const v1::VendorAlgorithm& refused, const std::string& why) {
    const CublasLtGemm plan = Plan({.chosen = &refused});
    EXPECT_EQ(plan.algorithm().algo(), first.algo());
    EXPECT_EQ(plan.algorithm().heuristic_index(), 0);
    const std::string& text = plan.algorithm().description();
    EXPECT_NE(text.find(", instead of the chosen " + refused.description() + ": " + why),
              std::string::npos)
        << text;
  };
  v1::VendorAlgorithm other_version = chosen;
  other_version.set_library_version(chosen.library_version() + 1);
  expect_refused(other_version,
                 "it was offered by cuBLASLt " + std::to_string(chosen.library_version() + 1));
  v1::VendorAlgorithm cut = chosen;
  cut.set_algo(chosen.algo().substr(0, 10));
  expect_refused(cut, "its algo has 10 bytes");
  v1::VendorAlgorithm for_the_pass = chosen;
  for_the_pass.set_epilogue_pass(true);
  expect_refused(for_the_pass, "it was chosen for the plain product followed by our epilogue pass");
}

}  // namespace
}  // namespace tiletune::runtime::cuda
