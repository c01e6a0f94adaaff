// tiletune-bench-gemm's shapes and epilogues: parsing and the keys they
// make, which decide whether cuBLASLt's own epilogue is measured.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/gpu/gemm/gemm_shapes.h"
#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/blas_epilogue.h"

namespace tiletune::bench {
namespace {

std::vector<std::string> ChainOps(const v1::KernelKey& key) {
  std::vector<std::string> ops;
  for (const auto& op : key.chain()) ops.push_back(op.op());
  return ops;
}

TEST(GemmShapes, ParsesEpiloguesByTheirNames) {
  const auto all = ParseEpilogueList(" plain, bias+gelu_tanh ,bias+gelu_tanh+residual,");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], Epilogue::kPlain);
  EXPECT_EQ(all[1], Epilogue::kBiasGeluTanh);
  EXPECT_EQ(all[2], Epilogue::kBiasGeluTanhResidual);
  for (const Epilogue e : all) EXPECT_EQ(ParseEpilogueList(EpilogueName(e)), std::vector{e});
}

TEST(GemmShapes, RejectsAnUnknownEpilogueNamingIt) {
  try {
    ParseEpilogueList("plain,bias+silu");
    FAIL() << "bias+silu was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--epilogues: 'bias+silu'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ParseEpilogueList(" , "), std::invalid_argument);
}

TEST(GemmShapes, ResidualAfterGeluIsBeyondCublasLtsEpilogue) {
  const GemmShape shape{128, 14336, 4096};
  const v1::KernelKey fused =
      GemmKey(shape, Epilogue::kBiasGeluTanh, Precision::kBf16, BLayout::kColMajor);
  EXPECT_EQ(ChainOps(fused), (std::vector<std::string>{"bias", "gelu_tanh"}));
  EXPECT_TRUE(kernels::gemm::FoldIntoBlasEpilogue(fused).fused);

  const v1::KernelKey residual =
      GemmKey(shape, Epilogue::kBiasGeluTanhResidual, Precision::kBf16, BLayout::kColMajor);
  EXPECT_EQ(ChainOps(residual), (std::vector<std::string>{"bias", "gelu_tanh", "residual_add"}));
  // cuBLASLt adds C before its activation, so only the unfused sequence
  // (plain GEMM + epilogue pass) can compute this chain.
  EXPECT_FALSE(kernels::gemm::FoldIntoBlasEpilogue(residual).fused);
  for (const auto& op : residual.chain()) {
    if (op.op() != "gelu_tanh") {
      EXPECT_EQ(op.dtype(), v1::DTYPE_BF16) << op.op();
    }
  }
}

// --b-layout: x @ W.t() lays B out column-major, x @ W leaves it row-major.
TEST(GemmShapes, BLayoutNamesBsStorage) {
  const GemmShape shape{256, 512, 128};
  const v1::KernelKey col = GemmKey(shape, Epilogue::kPlain, Precision::kBf16, BLayout::kColMajor);
  EXPECT_TRUE(kernels::IsColMajor(col, "b"));
  EXPECT_FALSE(kernels::IsColMajor(col, "a"));
  const v1::KernelKey row = GemmKey(shape, Epilogue::kPlain, Precision::kBf16, BLayout::kRowMajor);
  EXPECT_FALSE(kernels::IsColMajor(row, "b"));
  EXPECT_NE(kernels::CanonicalKeyString(col), kernels::CanonicalKeyString(row));
}

}  // namespace
}  // namespace tiletune::bench
