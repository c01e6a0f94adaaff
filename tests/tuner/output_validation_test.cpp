#include "tuner/worker/output_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tuner/worker/element_codec.h"

namespace tiletune::tuner {
namespace {

// The whole reference of a one-row output.
Reference Whole(std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  return {.row_elements = n, .output_rows = 1, .rows = {0}, .values = std::move(values)};
}

// Rows 1 and 3 of a 4 x 2 output whose every element should be 1.
Reference RowsOneAndThree() {
  return {.row_elements = 2, .output_rows = 4, .rows = {1, 3}, .values = {1, 1, 1, 1}};
}

TEST(OutputValidation, AcceptsWithinTolerance) {
  const std::vector<double> ref = {3, 4};
  const std::vector<float> out = {3.0f, 4.0f + 5e-6f};
  const OutputCheck c = CheckOutput(out, Whole(ref), 1e-5);
  EXPECT_TRUE(c.ok) << c.error;
  EXPECT_NEAR(c.rel_error, 1e-6, 1e-7);  // 5e-6 / ||(3, 4)||
}

TEST(OutputValidation, RejectsAboveToleranceWithNumbers) {
  const OutputCheck c = CheckOutput(std::vector<float>{3, 5}, Whole({3, 4}), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_NEAR(c.rel_error, 0.2, 1e-12);
  EXPECT_EQ(c.error,
            "relative error 0.2 exceeds tolerance 1e-05 (largest difference at element 1: got 5, "
            "want 4)");
}

TEST(OutputValidation, CountsPoisonAsUnwritten) {
  EXPECT_TRUE(std::isnan(PoisonValue()));
  const std::vector<float> out = {1, PoisonValue(), PoisonValue()};
  const OutputCheck c = CheckOutput(out, Whole({1, 2, 3}), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.unwritten, 2);
  EXPECT_EQ(c.error, "2 of 3 output elements were never written");
}

TEST(OutputValidation, OtherNanIsNotUnwrittenButStillWrong) {
  const std::vector<float> out = {1, std::numeric_limits<float>::quiet_NaN()};
  const OutputCheck c = CheckOutput(out, Whole({1, 2}), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.unwritten, 0);
  EXPECT_EQ(c.non_finite, 1);
}

// Row values such as attention's lse: -inf is a value (a row that sees no
// key), wanted exactly where the reference has it; rows need not ascend.
TEST(OutputValidation, NegativeInfinityIsAValueWhereAllowed) {
  const float inf = std::numeric_limits<float>::infinity();
  Reference lse = {
      .row_elements = 1, .output_rows = 4, .rows = {2, 0, 3}, .values = {1.5, -inf, 2}};
  lse.negative_infinity_allowed = true;
  EXPECT_TRUE(CheckOutput(std::vector<float>{-inf, 7, 1.5f, 2}, lse, 1e-5).ok);
  // Not where the reference is finite, nor finite where it is -inf.
  OutputCheck c = CheckOutput(std::vector<float>{-inf, 7, -inf, 2}, lse, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error,
            "1 elements on 3 sampled rows are -inf where the reference is not, or the other way "
            "round (element 2: got -inf, want 1.5)");
  EXPECT_FALSE(CheckOutput(std::vector<float>{0, 7, 1.5f, 2}, lse, 1e-5).ok);
  // +inf stays a fault, and without the allowance -inf is one too.
  EXPECT_EQ(CheckOutput(std::vector<float>{-inf, inf, 1.5f, 2}, lse, 1e-5).non_finite, 1);
  lse.negative_infinity_allowed = false;
  EXPECT_EQ(CheckOutput(std::vector<float>{-inf, 7, 1.5f, 2}, lse, 1e-5).non_finite, 1);
}

TEST(OutputValidation, AllZeroReferenceUsesAbsoluteError) {
  EXPECT_TRUE(CheckOutput(std::vector<float>{0, 0}, Whole({0, 0}), 1e-5).ok);
  EXPECT_FALSE(CheckOutput(std::vector<float>{0, 1}, Whole({0, 0}), 1e-5).ok);
}

TEST(OutputValidation, SampledRowsAreComparedAndNamedInTheError) {
  std::vector<float> out(8, 1.0f);
  OutputCheck c = CheckOutput(out, RowsOneAndThree(), 1e-5);
  EXPECT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.checked, 4);
  out[7] = 2;  // row 3, column 1
  c = CheckOutput(out, RowsOneAndThree(), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error,
            "relative error 0.5 on 2 sampled rows exceeds tolerance 1e-05 (largest difference at "
            "element 7: got 2, want 1)");
  // Rows outside the sample are not compared...
  out[7] = 1;
  out[4] = 5;
  EXPECT_TRUE(CheckOutput(out, RowsOneAndThree(), 1e-5).ok);
}

TEST(OutputValidation, EveryElementIsScannedForPoisonAndNonFiniteValues) {
  std::vector<float> out(8, 1.0f);
  out[0] = PoisonValue();  // row 0: not sampled
  OutputCheck c = CheckOutput(out, RowsOneAndThree(), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.unwritten, 1);
  EXPECT_EQ(c.error, "1 of 8 output elements were never written");
  out[0] = 1;
  out[5] = std::numeric_limits<float>::infinity();  // row 2: not sampled
  c = CheckOutput(out, RowsOneAndThree(), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.non_finite, 1);
}

// 16-bit outputs are checked as the device wrote them: the poison, computed
// NaNs, infinities and (where allowed) -inf told apart on the bits, and the
// error taken over the decoded reference rows.
TEST(OutputValidation, SixteenBitOutputsAreCheckedOnTheirBits) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const v1::DType dtype : {v1::DTYPE_BF16, v1::DTYPE_F16}) {
    std::vector<float> values(8, 1.0f);
    values[0] = PoisonValue();                            // row 0: not sampled
    values[2] = std::numeric_limits<float>::quiet_NaN();  // row 1: sampled
    values[4] = -inf;                                     // row 2: not sampled
    const std::vector<std::byte> out = EncodeElements(values, dtype);
    OutputCheck c = CheckOutput(out, dtype, RowsOneAndThree(), 1e-2);
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.unwritten, 1) << dtype;
    EXPECT_EQ(c.non_finite, 2) << dtype;
    Reference allowing = RowsOneAndThree();
    allowing.negative_infinity_allowed = true;
    EXPECT_EQ(CheckOutput(out, dtype, allowing, 1e-2).non_finite, 1) << dtype;

    values = std::vector<float>(8, 1.0f);
    values[7] = 1.25f;  // row 3: sampled, 1.25 exactly in both types
    c = CheckOutput(EncodeElements(values, dtype), dtype, RowsOneAndThree(), 1e-5);
    EXPECT_FALSE(c.ok);
    EXPECT_NEAR(c.rel_error, 0.125, 1e-12) << dtype;  // 0.25 / ||(1, 1, 1, 1)||
    EXPECT_EQ(c.error,
              "relative error 0.125 on 2 sampled rows exceeds tolerance 1e-05 (largest "
              "difference at element 7: got 1.25, want 1)");
  }
}

TEST(OutputValidation, OutputAndReferenceShapesMustAgree) {
  const OutputCheck c = CheckOutput(std::vector<float>(6, 1.0f), RowsOneAndThree(), 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, "output has 6 elements, the reference 8");
}

}  // namespace
}  // namespace tiletune::tuner
