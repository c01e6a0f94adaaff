// Which epilogue chains fold into a BLASLt library's own epilogue
// (D = activation(alpha * A*B + beta * C + bias)) and which need the pass.
#include "kernels/ops/gemm/blas_epilogue.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

namespace tiletune::kernels::gemm {
namespace {

v1::KernelKey Gemm(std::initializer_list<std::pair<const char*, v1::DType>> chain,
                   v1::DType out = v1::DTYPE_BF16) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_BF16);
  key.set_output_dtype(out);
  for (const auto& [name, size] : {std::pair<const char*, int64_t>{"m", 8}, {"n", 8}, {"k", 8}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (const auto& [op, dtype] : chain) {
    auto* c = key.add_chain();
    c->set_op(op);
    c->set_dtype(dtype);
  }
  return key;
}

constexpr v1::DType kSame = v1::DTYPE_UNSPECIFIED;  // normalizes to the output dtype

TEST(BlasEpilogue, NoChainIsThePlainProduct) {
  const BlasEpilogue fold = FoldIntoBlasEpilogue(Gemm({}));
  EXPECT_TRUE(fold.fused);
  EXPECT_FALSE(fold.scale_op || fold.residual_op || fold.bias_op);
  EXPECT_EQ(fold.activation, BlasActivation::kNone);
}

TEST(BlasEpilogue, BiasAndActivationsFold) {
  const BlasEpilogue gelu = FoldIntoBlasEpilogue(Gemm({{"bias", kSame}, {"gelu_tanh", kSame}}));
  EXPECT_TRUE(gelu.fused);
  EXPECT_EQ(gelu.bias_op, 0);
  EXPECT_EQ(gelu.activation, BlasActivation::kGeluTanh);
  const BlasEpilogue relu = FoldIntoBlasEpilogue(Gemm({{"relu", kSame}}));
  EXPECT_TRUE(relu.fused);
  EXPECT_FALSE(relu.bias_op);
  EXPECT_EQ(relu.activation, BlasActivation::kRelu);
}

TEST(BlasEpilogue, LeadingScaleIsAlphaAndSumsCommuteBeforeTheActivation) {
  const BlasEpilogue fold = FoldIntoBlasEpilogue(Gemm({{"scale", kSame},
                                                       {"residual_add", kSame},
                                                       {"bias", kSame},
                                                       {"relu", kSame},
                                                       {"cast", v1::DTYPE_BF16}}));
  EXPECT_TRUE(fold.fused);
  EXPECT_EQ(fold.scale_op, 0);
  EXPECT_EQ(fold.residual_op, 1);
  EXPECT_EQ(fold.bias_op, 2);
  EXPECT_EQ(fold.activation, BlasActivation::kRelu);
}

TEST(BlasEpilogue, WhatTheLibraryCannotComputeIsNotFolded) {
  const std::initializer_list<std::pair<const char*, v1::DType>> unfoldable[] = {
      {{"gelu_erf", kSame}},                       // no erf GELU
      {{"silu", kSame}},                           // no SiLU
      {{"bias", kSame}, {"scale", kSame}},         // alpha would scale the bias too
      {{"relu", kSame}, {"residual_add", kSame}},  // C is added before the activation
      {{"relu", kSame}, {"bias", kSame}},          // so is the bias
      {{"relu", kSame}, {"gelu_tanh", kSame}},     // one activation
      {{"bias", kSame}, {"bias", kSame}},          // one bias
      {{"bias", v1::DTYPE_F32}},                   // bias in the output dtype only
      {{"residual_add", v1::DTYPE_F32}},           // C in the output dtype only
      {{"cast", v1::DTYPE_F16}},                   // the store rounds to bf16, not f16
      {{"bias", kSame}, {"gelu_erf", kSame}, {"residual_add", kSame}},
  };
  for (const auto& chain : unfoldable) {
    const BlasEpilogue fold = FoldIntoBlasEpilogue(Gemm(chain));
    EXPECT_FALSE(fold.fused) << chain.begin()->first << " (" << chain.size() << " ops)";
    EXPECT_FALSE(fold.scale_op || fold.residual_op || fold.bias_op);
    EXPECT_EQ(fold.activation, BlasActivation::kNone);
  }
}

TEST(BlasEpilogue, TensorsInTheOutputDtypeFoldForAnyOutput) {
  const BlasEpilogue fold = FoldIntoBlasEpilogue(
      Gemm({{"bias", v1::DTYPE_F32}, {"residual_add", v1::DTYPE_F32}}, v1::DTYPE_F32));
  EXPECT_TRUE(fold.fused);
  EXPECT_EQ(fold.bias_op, 0);
  EXPECT_EQ(fold.residual_op, 1);
}

}  // namespace
}  // namespace tiletune::kernels::gemm
