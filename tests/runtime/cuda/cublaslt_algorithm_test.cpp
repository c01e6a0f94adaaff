// cuBLASLt algorithms as records keep them (no GPU needed): the name a
// person reads, and the stored bytes back.
#include "runtime/cuda/cublaslt_algorithm.h"

#include <gtest/gtest.h>

#include "tests/support/gemm_test_key.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime::cuda {
namespace {

using tiletune::testing::GemmTestKey;
constexpr auto B = v1::DTYPE_BF16;

const CublasLtAlgoConfig kConfig{
    {{"id", 66}, {"tile", 18}, {"stages", 22}, {"split-k", 1}, {"cluster", 3}}};

TEST(CublasLtAlgorithm, ANameSaysWhichOfTheHeuristicsAlgorithmsAndWhatItComputes) {
  const v1::KernelKey key =
      GemmTestKey(16, 4096, 4096, 1, B, B, false, true, {"bias", "gelu_tanh"});
  EXPECT_EQ(DescribeCublasLtAlgorithm(3, 8, CublasLtGemmSpecOf(key), 4194304, kConfig),
            "cublasLt algo 3 of 8 (fused epilogue GELU_BIAS, workspace 4194304 bytes, id 66, "
            "tile 18, stages 22, split-k 1, cluster 3)");
  EXPECT_EQ(DescribeCublasLtAlgorithm(0, 5, WithEpiloguePass(CublasLtGemmSpecOf(key)), 0, {}),
            "cublasLt algo 0 of 5 (plain product + our epilogue pass, workspace 0 bytes)");
  const v1::KernelKey plain = GemmTestKey(16, 4096, 4096, 1, B, B, false, true);
  EXPECT_EQ(DescribeCublasLtAlgorithm(7, 8, CublasLtGemmSpecOf(plain), 1024, {{{"id", 6}}}),
            "cublasLt algo 7 of 8 (plain product, workspace 1024 bytes, id 6)");
  const v1::KernelKey sums =
      GemmTestKey(16, 64, 64, 1, B, B, false, true, {"scale", "residual_add", "relu"});
  EXPECT_EQ(DescribeCublasLtAlgorithm(1, 2, CublasLtGemmSpecOf(sums), 0, {}),
            "cublasLt algo 1 of 2 (fused epilogue RELU, scale as alpha, residual as C, workspace "
            "0 bytes)");
}

TEST(CublasLtAlgorithm, EpilogueNames) {
  EXPECT_EQ(CublasLtEpilogueName(CUBLASLT_EPILOGUE_DEFAULT), "DEFAULT");
  EXPECT_EQ(CublasLtEpilogueName(CUBLASLT_EPILOGUE_RELU_BIAS), "RELU_BIAS");
  EXPECT_EQ(CublasLtEpilogueName(CUBLASLT_EPILOGUE_GELU), "GELU");
  EXPECT_EQ(CublasLtEpilogueName(1024), "epilogue 1024");
}

TEST(CublasLtAlgorithm, StoredBytesGiveTheSameAlgorithmBack) {
  cublasLtMatmulAlgo_t algo{};
  for (int i = 0; i < 8; ++i) algo.data[i] = 0x0102030405060708ull * static_cast<uint64_t>(i + 1);
  const std::string bytes = AlgoBytes(algo);
  EXPECT_EQ(bytes.size(), 64u);
  const auto back = AlgoOfBytes(bytes);
  ASSERT_TRUE(back);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(back->data[i], algo.data[i]) << i;
  // Through the record's field and its wire form.
  v1::VendorAlgorithm stored;
  stored.set_algo(bytes);
  v1::VendorAlgorithm parsed;
  ASSERT_TRUE(parsed.ParseFromString(stored.SerializeAsString()));
  EXPECT_EQ(AlgoOfBytes(parsed.algo())->data[7], algo.data[7]);
  // Anything but 64 bytes is no algorithm.
  EXPECT_FALSE(AlgoOfBytes(""));
  EXPECT_FALSE(AlgoOfBytes(bytes.substr(0, 63)));
  EXPECT_FALSE(AlgoOfBytes(bytes + "x"));
}

}  // namespace
}  // namespace tiletune::runtime::cuda
