#include "tuner/decision_margin.h"

#include <gtest/gtest.h>

namespace tiletune::tuner {
namespace {

TEST(DecisionMargin, OneDisturbedRoundDoesNotVetoAClearWin) {
  // Seen in CI on two loaded cores: the variant took a quarter of the
  // baseline's time in four rounds and 1.56x in one.
  const auto m = JudgeMargin({0.26, 0.25, 1.56, 0.27, 0.26}, 1.02, 1);
  EXPECT_NEAR(m.measured, 0.74, 1e-12);
  EXPECT_NEAR(m.noise, 0.01, 1e-12);
  EXPECT_TRUE(m.tuned);
}

TEST(DecisionMargin, AWinSmallerThanTheNoiseIsNotServed) {
  // 5% faster by the median, but the middle rounds differ by 10%.
  const auto m = JudgeMargin({0.90, 0.95, 1.00, 0.88, 0.98}, 1.02, 1);
  EXPECT_NEAR(m.measured, 0.05, 1e-12);
  EXPECT_NEAR(m.noise, 0.08, 1e-12);
  EXPECT_NEAR(m.required, 0.08, 1e-12);
  EXPECT_FALSE(m.tuned);
}

TEST(DecisionMargin, MinSpeedupBoundsTheRequiredMarginFromBelow) {
  // Quiet rounds, 1% faster: below min_speedup 1.02 (a margin of 1.96%).
  const auto quiet = JudgeMargin({0.99, 0.99, 0.99, 0.99, 0.99}, 1.02, 1);
  EXPECT_NEAR(quiet.required, 1 - 1 / 1.02, 1e-12);
  EXPECT_FALSE(quiet.tuned);
  EXPECT_TRUE(JudgeMargin({0.97, 0.97, 0.97, 0.97, 0.97}, 1.02, 1).tuned);
}

TEST(DecisionMargin, NoiseFactorScalesTheNoise) {
  const std::vector<double> ratios = {0.80, 0.85, 0.90, 0.95, 1.00};
  // 10% saved, 10% noise.
  EXPECT_TRUE(JudgeMargin(ratios, 1.02, 0.5).tuned);
  EXPECT_FALSE(JudgeMargin(ratios, 1.02, 2).tuned);
  EXPECT_NEAR(JudgeMargin(ratios, 1.02, 2).required, 0.2, 1e-12);
}

TEST(DecisionMargin, SlowerThanTheBaselineIsNeverServed) {
  EXPECT_FALSE(JudgeMargin({1.2, 1.1, 1.3}, 1.0, 0).tuned);
  EXPECT_FALSE(JudgeMargin({1.0}, 1.0, 0).tuned);
}

}  // namespace
}  // namespace tiletune::tuner
