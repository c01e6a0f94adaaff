#include "tuner/worker/reference_rows.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/tuner/host_kernel_fixture.h"
#include "tuner/worker/host_reference.h"

namespace tiletune::tuner {
namespace {

using testing::MakeKey;

bool Contains(const std::vector<int64_t>& rows, int64_t row) {
  return std::ranges::binary_search(rows, row);
}

worker::v1::ReferencePolicy Policy(double max_full_flops, int sample_rows) {
  worker::v1::ReferencePolicy policy;
  policy.set_max_full_flops(max_full_flops);
  policy.set_sample_rows(sample_rows);
  return policy;
}

TEST(ReferenceRows, FlopsCountTheGemmAndEveryElementOp) {
  const ProblemInputs gemm =
      MakeProblemInputs(MakeKey("gemm", {{"m", 4}, {"n", 5}, {"k", 6}, {"batch", 2}}, {"bias"}), 1);
  EXPECT_DOUBLE_EQ(ReferenceFlops(gemm), 2.0 * 2 * 4 * 5 * 6 + 40);
  const ProblemInputs softmax =
      MakeProblemInputs(MakeKey("softmax", {{"rows", 10}, {"cols", 3}}, {"scale", "relu"}), 1);
  EXPECT_DOUBLE_EQ(ReferenceFlops(softmax), 30.0 * (5 + 2));
}

// An odd shape: 1000 rows leave a partial last tile for most tile heights.
TEST(ReferenceRows, SampleHoldsEdgeAndPartialTileRowsAndIsFixedBySeed) {
  const ProblemInputs p = MakeProblemInputs(MakeKey("gemm", {{"m", 1000}, {"n", 3}, {"k", 2}}), 1);
  const std::vector<int64_t> rows = SampledRows(p, 20, 7);
  EXPECT_TRUE(std::ranges::is_sorted(rows));
  EXPECT_EQ(std::ranges::adjacent_find(rows), rows.end());
  // The first and last row, and the last tile's first row for tile heights
  // 16 and 32 (992), 48...96 (960), 128 (896), 256 (768).
  for (const int64_t row : {0, 999, 992, 960, 896, 768}) EXPECT_TRUE(Contains(rows, row)) << row;
  for (int64_t height = 16; height <= 256; height += 16) {
    EXPECT_TRUE(Contains(rows, 999 / height * height)) << height;
  }
  EXPECT_EQ(rows.size(), SampledRows(p, 0, 7).size() + 20);
  EXPECT_EQ(SampledRows(p, 20, 7), rows);
  EXPECT_NE(SampledRows(p, 20, 8), rows);
}

TEST(ReferenceRows, BatchedSampleHoldsTheEdgesOfTheFirstAndLastEntry) {
  const ProblemInputs p =
      MakeProblemInputs(MakeKey("gemm", {{"m", 300}, {"n", 3}, {"k", 2}, {"batch", 5}}), 1);
  const std::vector<int64_t> rows = SampledRows(p, 4, 1);
  for (const int64_t row : {0, 299, 288, 1200, 1499, 1488}) EXPECT_TRUE(Contains(rows, row)) << row;
  EXPECT_TRUE(std::ranges::all_of(rows, [](int64_t r) { return r < 1500; }));
}

TEST(ReferenceRows, WholeUpToTheLimitSampledAbove) {
  const ProblemInputs p = MakeProblemInputs(MakeKey("gemm", {{"m", 500}, {"n", 8}, {"k", 8}}), 1);
  const double flops = ReferenceFlops(p);
  EXPECT_EQ(ReferenceRows(p, Policy(flops, 10), 3).size(), 500u);
  EXPECT_EQ(ReferenceRows(p, Policy(0, 10), 3).size(), 500u);  // 0: no limit
  const std::vector<int64_t> sampled = ReferenceRows(p, Policy(flops - 1, 10), 3);
  EXPECT_LT(sampled.size(), 60u);
  EXPECT_EQ(sampled, SampledRows(p, 10, 3));
  // A sample no smaller than the output is the whole output.
  EXPECT_EQ(ReferenceRows(p, Policy(1, 490), 3).size(), 500u);
}

TEST(ReferenceRows, ZeroThreadsMeansEveryHardwareThread) {
  worker::v1::ReferencePolicy policy;
  EXPECT_GE(ReferenceThreads(policy), 1);
  policy.set_threads(3);
  EXPECT_EQ(ReferenceThreads(policy), 3);
}

}  // namespace
}  // namespace tiletune::tuner
