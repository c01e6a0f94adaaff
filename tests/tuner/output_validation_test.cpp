#include "tuner/worker/output_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tiletune::tuner {
namespace {

TEST(OutputValidation, AcceptsWithinTolerance) {
  const std::vector<double> ref = {3, 4};
  const std::vector<float> out = {3.0f, 4.0f + 5e-6f};
  const OutputCheck c = CheckOutput(out, ref, 1e-5);
  EXPECT_TRUE(c.ok) << c.error;
  EXPECT_NEAR(c.rel_error, 1e-6, 1e-7);  // 5e-6 / ||(3, 4)||
}

TEST(OutputValidation, RejectsAboveToleranceWithNumbers) {
  const OutputCheck c = CheckOutput(std::vector<float>{3, 5}, std::vector<double>{3, 4}, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_NEAR(c.rel_error, 0.2, 1e-12);
  EXPECT_EQ(c.error,
            "relative error 0.2 exceeds tolerance 1e-05 (largest difference at element 1: got 5, "
            "want 4)");
}

TEST(OutputValidation, CountsPoisonAsUnwritten) {
  EXPECT_TRUE(std::isnan(PoisonValue()));
  const std::vector<float> out = {1, PoisonValue(), PoisonValue()};
  const OutputCheck c = CheckOutput(out, std::vector<double>{1, 2, 3}, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.unwritten, 2);
  EXPECT_EQ(c.error, "2 of 3 output elements were never written");
}

TEST(OutputValidation, OtherNanIsNotUnwrittenButStillWrong) {
  const std::vector<float> out = {1, std::numeric_limits<float>::quiet_NaN()};
  const OutputCheck c = CheckOutput(out, std::vector<double>{1, 2}, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.unwritten, 0);
  EXPECT_EQ(c.non_finite, 1);
}

TEST(OutputValidation, AllZeroReferenceUsesAbsoluteError) {
  EXPECT_TRUE(CheckOutput(std::vector<float>{0, 0}, std::vector<double>{0, 0}, 1e-5).ok);
  EXPECT_FALSE(CheckOutput(std::vector<float>{0, 1}, std::vector<double>{0, 0}, 1e-5).ok);
}

}  // namespace
}  // namespace tiletune::tuner
