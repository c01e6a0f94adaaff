#include "tuner/worker/element_codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "tuner/worker/output_validation.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::tuner {
namespace {

TEST(ElementCodec, RoundsToNearestEven) {
  EXPECT_EQ(RoundToDType(1.0f / 3.0f, v1::DTYPE_BF16), 0.333984375f);
  EXPECT_EQ(RoundToDType(1.0f / 3.0f, v1::DTYPE_F16), 0.333251953125f);
  EXPECT_EQ(RoundToDType(1.0f / 3.0f, v1::DTYPE_F32), 1.0f / 3.0f);
  // 1 + 2^-8 lies halfway between two bf16 values: ties go to the even one.
  EXPECT_EQ(RoundToDType(1.0f + 0x1p-8f, v1::DTYPE_BF16), 1.0f);
  EXPECT_EQ(RoundToDType(1.0f + 3 * 0x1p-8f, v1::DTYPE_BF16), 1.0f + 0x1p-6f);
}

TEST(ElementCodec, SixteenBitTensorsRoundTripWithTheirPoison) {
  for (auto dtype : {v1::DTYPE_BF16, v1::DTYPE_F16, v1::DTYPE_F32}) {
    const std::vector<float> values = {0.5f, -1.25f, PoisonValue(), 3.0f};
    const auto bytes = EncodeElements(values, dtype);
    EXPECT_EQ(bytes.size(), values.size() * ElementBytes(dtype));
    const auto back = DecodeElements(bytes, dtype);
    ASSERT_EQ(back.size(), values.size());
    EXPECT_EQ(back[0], 0.5f);
    EXPECT_EQ(back[1], -1.25f);
    EXPECT_EQ(std::bit_cast<uint32_t>(back[2]), kPoisonBits) << "poison lost for dtype " << dtype;
    EXPECT_EQ(back[3], 3.0f);
  }
}

TEST(ElementCodec, PoisonFillsAndIsCountedOnTheBits) {
  const float inf = std::numeric_limits<float>::infinity();
  for (auto dtype : {v1::DTYPE_BF16, v1::DTYPE_F16, v1::DTYPE_F32}) {
    std::vector<std::byte> bytes = PoisonElements(5, dtype);
    EXPECT_EQ(bytes, EncodeElements(std::vector<float>(5, PoisonValue()), dtype)) << dtype;
    ElementCensus census = CountPoisonedAndNonFinite(bytes, dtype, false);
    EXPECT_EQ(census.poisoned, 5);
    EXPECT_EQ(census.non_finite, 0);
    const std::vector<float> values = {1.0f, PoisonValue(), std::numeric_limits<float>::quiet_NaN(),
                                       inf,  -inf,          -2.0f};
    bytes = EncodeElements(values, dtype);
    census = CountPoisonedAndNonFinite(bytes, dtype, false);
    EXPECT_EQ(census.poisoned, 1) << dtype;
    EXPECT_EQ(census.non_finite, 3) << dtype;
    EXPECT_EQ(CountPoisonedAndNonFinite(bytes, dtype, true).non_finite, 2) << dtype;
  }
}

TEST(ElementCodec, ComputedNanIsNotPoison) {
  const std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN()};
  const auto back = DecodeElements(EncodeElements(nan, v1::DTYPE_BF16), v1::DTYPE_BF16);
  EXPECT_TRUE(std::isnan(back[0]));
  EXPECT_NE(std::bit_cast<uint32_t>(back[0]), kPoisonBits);
}

TEST(ElementCodec, HalfPrecisionInputsAreExactlyWhatTheKernelReads) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_BF16);
  key.set_output_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"m", 5}, {"n", 7}, {"k", 3}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  key.add_chain()->set_op("bias");
  const ProblemInputs p = MakeProblemInputs(key, 9);
  for (float v : p.tensors.at("a")) EXPECT_EQ(v, RoundToDType(v, v1::DTYPE_BF16));
  for (float v : p.tensors.at("b")) EXPECT_EQ(v, RoundToDType(v, v1::DTYPE_BF16));
  // The bias takes the output's dtype (f32) when the key names none.
  bool any_not_bf16 = false;
  for (float v : p.chain_tensors[0]) any_not_bf16 |= v != RoundToDType(v, v1::DTYPE_BF16);
  EXPECT_TRUE(any_not_bf16);
  key.set_input_dtype(v1::DTYPE_F64);
  EXPECT_THROW(MakeProblemInputs(key, 9), std::invalid_argument);
}

}  // namespace
}  // namespace tiletune::tuner
