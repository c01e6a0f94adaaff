// The worker's inputs are random and never zero: a zero input hides a kernel
// that ignores it (and an all-zero tensor validates almost anything).
#include "tuner/worker/problem_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tests/tuner/host_kernel_fixture.h"

namespace tiletune::tuner {
namespace {

void ExpectRandomNonZero(const std::vector<float>& tensor, const std::string& what) {
  ASSERT_FALSE(tensor.empty()) << what;
  std::set<float> distinct;
  for (float v : tensor) {
    ASSERT_GE(std::fabs(v), 0x1p-11f) << what << " holds a value near zero";
    ASSERT_LE(std::fabs(v), 1.0f) << what;
    distinct.insert(v);
  }
  // Random, not a constant fill (bf16 has only ~2500 values in this range).
  EXPECT_GT(distinct.size(), std::min<size_t>(tensor.size() / 2, 500)) << what;
}

TEST(ProblemInputs, GemmOperandsAndChainTensorsAreRandomAndNeverZero) {
  const auto key = testing::MakeKey("gemm", {{"m", 33}, {"n", 40}, {"k", 17}},
                                    {"bias", "residual_add", "scale"});
  const ProblemInputs p = MakeProblemInputs(key, 5);
  ExpectRandomNonZero(p.tensors.at("a"), "a");
  ExpectRandomNonZero(p.tensors.at("b"), "b");
  ExpectRandomNonZero(p.chain_tensors[0], "bias");
  ExpectRandomNonZero(p.chain_tensors[1], "residual");
  EXPECT_NE(p.chain_scalars[2], 0);
}

TEST(ProblemInputs, HalfPrecisionRoundingKeepsInputsNonZero) {
  auto key = testing::MakeKey("layernorm", {{"rows", 64}, {"cols", 96}});
  key.set_input_dtype(v1::DTYPE_BF16);
  key.set_output_dtype(v1::DTYPE_BF16);
  const ProblemInputs p = MakeProblemInputs(key, 9);
  ExpectRandomNonZero(p.tensors.at("x"), "x");
  ExpectRandomNonZero(p.tensors.at("w"), "w");
  ExpectRandomNonZero(p.tensors.at("b"), "b");
}

TEST(ProblemInputs, TheSeedDecidesTheInputs) {
  const auto key = testing::MakeKey("softmax", {{"rows", 8}, {"cols", 32}});
  EXPECT_EQ(MakeProblemInputs(key, 1).tensors, MakeProblemInputs(key, 1).tensors);
  EXPECT_NE(MakeProblemInputs(key, 1).tensors, MakeProblemInputs(key, 2).tensors);
}

// Large tensors are drawn by several threads, each value from its index:
// the thread count changes nothing, and the operands differ from each other.
TEST(ProblemInputs, ThreadsDrawTheSameInputs) {
  const auto key = testing::MakeKey("gemm", {{"m", 1500}, {"n", 1100}, {"k", 700}}, {"bias"});
  const ProblemInputs one = MakeProblemInputs(key, 3, 1), many = MakeProblemInputs(key, 3, 7);
  EXPECT_EQ(one.tensors, many.tensors);
  EXPECT_EQ(one.chain_tensors, many.chain_tensors);
  ExpectRandomNonZero(many.tensors.at("a"), "a");
  ExpectRandomNonZero(many.tensors.at("b"), "b");
  const std::vector<float>& a = many.tensors.at("a");
  const std::vector<float>& b = many.tensors.at("b");
  EXPECT_FALSE(std::equal(a.begin(), a.begin() + 1000, b.begin()));
}

}  // namespace
}  // namespace tiletune::tuner
