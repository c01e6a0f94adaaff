#include "tuner/worker/timing_summary.h"

#include <gtest/gtest.h>

namespace tiletune::tuner {
namespace {

TEST(TimingSummary, MedianExtremesAndSpread) {
  // 1..11 microseconds, shuffled: p10 = 2, p90 = 10, median = 6.
  const v1::Timing t =
      SummarizeTimes({5e-6, 1e-6, 11e-6, 3e-6, 7e-6, 2e-6, 9e-6, 4e-6, 10e-6, 6e-6, 8e-6});
  EXPECT_DOUBLE_EQ(t.median_us(), 6);
  EXPECT_DOUBLE_EQ(t.min_us(), 1);
  EXPECT_DOUBLE_EQ(t.max_us(), 11);
  EXPECT_NEAR(t.spread(), 8.0 / 6.0, 1e-12);
  EXPECT_EQ(t.repetitions(), 11);
}

TEST(TimingSummary, EvenCountInterpolates) {
  const v1::Timing t = SummarizeTimes({1e-6, 3e-6});
  EXPECT_DOUBLE_EQ(t.median_us(), 2);
  EXPECT_EQ(t.repetitions(), 2);
}

TEST(TimingSummary, NoTimesIsAnEmptyTiming) {
  EXPECT_EQ(SummarizeTimes({}).repetitions(), 0);
}

}  // namespace
}  // namespace tiletune::tuner
