// How a GEMM key maps onto cuBLASLt (no GPU needed): operand layouts and
// transposes of the row-major <-> column-major swap, batch strides, compute
// types, and the epilogue of the chain.
#include "runtime/cuda/cublaslt_gemm_spec.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/support/gemm_test_key.h"

namespace tiletune::runtime::cuda {
namespace {

using kernels::gemm::BlasActivation;
using kernels::gemm::BlasEpilogue;
using tiletune::testing::GemmTestKey;

constexpr auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;

void ExpectMatrix(const CublasLtMatrix& got, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  EXPECT_EQ(got.type, type);
  EXPECT_EQ(got.rows, rows);
  EXPECT_EQ(got.cols, cols);
  EXPECT_EQ(got.ld, ld);
}

TEST(CublasLtGemmSpec, RowMajorOperandsNeedNoTranspose) {
  // C (77 x 129) = A (77 x 65) * B (65 x 129): C^T = B^T * A^T.
  const CublasLtGemmSpec s = CublasLtGemmSpecOf(GemmTestKey(77, 129, 65, 1, B, B, false, false));
  EXPECT_EQ(s.trans_a, CUBLAS_OP_N);
  ExpectMatrix(s.a, CUDA_R_16BF, 129, 65, 129);  // our B read as B^T
  EXPECT_EQ(s.trans_b, CUBLAS_OP_N);
  ExpectMatrix(s.b, CUDA_R_16BF, 65, 77, 65);  // our A read as A^T
  ExpectMatrix(s.d, CUDA_R_16BF, 129, 77, 129);
  EXPECT_EQ(s.batch, 1);
  EXPECT_EQ(s.compute_type, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(s.scale_type, CUDA_R_32F);
  EXPECT_EQ(s.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
}

TEST(CublasLtGemmSpec, ColumnMajorOperandsAreTransposed) {
  const CublasLtGemmSpec s = CublasLtGemmSpecOf(GemmTestKey(77, 129, 65, 1, B, B, true, true));
  EXPECT_EQ(s.trans_a, CUBLAS_OP_T);
  ExpectMatrix(s.a, CUDA_R_16BF, 65, 129, 65);  // our B as stored, k x n
  EXPECT_EQ(s.trans_b, CUBLAS_OP_T);
  ExpectMatrix(s.b, CUDA_R_16BF, 77, 65, 77);  // our A as stored, m x k
  ExpectMatrix(s.d, CUDA_R_16BF, 129, 77, 129);
}

TEST(CublasLtGemmSpec, BatchesAreStridedByTheDenseOperands) {
  const CublasLtGemmSpec s = CublasLtGemmSpecOf(GemmTestKey(16, 32, 8, 3, H, F, false, true));
  EXPECT_EQ(s.batch, 3);
  EXPECT_EQ(s.a.batch_stride, 8 * 32);
  EXPECT_EQ(s.b.batch_stride, 16 * 8);
  EXPECT_EQ(s.d.batch_stride, 16 * 32);
  EXPECT_EQ(s.a.type, CUDA_R_16F);
  EXPECT_EQ(s.d.type, CUDA_R_32F);
}

TEST(CublasLtGemmSpec, F32ComputesExactlyUnlessTheKeyAllowsTf32) {
  v1::KernelKey key = GemmTestKey(64, 64, 64, 1, F, F, false, false);
  EXPECT_EQ(CublasLtGemmSpecOf(key).compute_type, CUBLAS_COMPUTE_32F);
  key.set_allow_tf32(true);
  EXPECT_EQ(CublasLtGemmSpecOf(key).compute_type, CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(CublasLtGemmSpecOf(key).a.type, CUDA_R_32F);
}

TEST(CublasLtGemmSpec, UnsupportedDtypesNameTheField) {
  v1::KernelKey key = GemmTestKey(8, 8, 8, 1, F, B, false, false);
  try {
    CublasLtGemmSpecOf(key);
    FAIL() << "f32 -> bf16 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("output_dtype:", 0), 0u) << e.what();
  }
  key.set_input_dtype(v1::DTYPE_F64);
  EXPECT_THROW(CublasLtGemmSpecOf(key), std::invalid_argument);
}

TEST(CublasLtGemmSpec, ChainsMapToCublasLtEpilogues) {
  const auto epilogue = [](bool bias, BlasActivation activation) {
    BlasEpilogue fold;
    fold.fused = true;
    if (bias) fold.bias_op = 0;
    fold.activation = activation;
    return CublasLtEpilogueOf(fold);
  };
  EXPECT_EQ(epilogue(false, BlasActivation::kNone), CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(epilogue(true, BlasActivation::kNone), CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(epilogue(false, BlasActivation::kRelu), CUBLASLT_EPILOGUE_RELU);
  EXPECT_EQ(epilogue(true, BlasActivation::kRelu), CUBLASLT_EPILOGUE_RELU_BIAS);
  EXPECT_EQ(epilogue(false, BlasActivation::kGeluTanh), CUBLASLT_EPILOGUE_GELU);
  EXPECT_EQ(epilogue(true, BlasActivation::kGeluTanh), CUBLASLT_EPILOGUE_GELU_BIAS);
  // An unfused chain leaves cuBLASLt the plain product.
  EXPECT_EQ(CublasLtEpilogueOf(BlasEpilogue{}), CUBLASLT_EPILOGUE_DEFAULT);

  v1::KernelKey key = GemmTestKey(8, 8, 8, 1, B, B, false, false, {"bias", "gelu_tanh"});
  EXPECT_EQ(CublasLtGemmSpecOf(key).epilogue, CUBLASLT_EPILOGUE_GELU_BIAS);
  key.add_chain()->set_op("residual_add");  // after the activation: not expressible
  const CublasLtGemmSpec unfused = CublasLtGemmSpecOf(key);
  EXPECT_FALSE(unfused.fold.fused);
  EXPECT_EQ(unfused.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_TRUE(unfused.epilogue_pass);
}

TEST(CublasLtGemmSpec, AChainThatFitsCanStillBeLeftToOurPass) {
  const v1::KernelKey key =
      GemmTestKey(8, 8, 8, 1, B, B, false, false, {"scale", "residual_add", "bias", "gelu_tanh"});
  const CublasLtGemmSpec fused = CublasLtGemmSpecOf(key);
  EXPECT_FALSE(fused.epilogue_pass);
  EXPECT_EQ(fused.epilogue, CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(fused.fold.scale_op, 0);
  EXPECT_EQ(fused.fold.residual_op, 1);
  // The plain product: no alpha, C or bias of the chain's; the same operands.
  const CublasLtGemmSpec plain = WithEpiloguePass(fused);
  EXPECT_TRUE(plain.epilogue_pass);
  EXPECT_EQ(plain.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_FALSE(plain.fold.scale_op || plain.fold.residual_op || plain.fold.bias_op);
  EXPECT_EQ(plain.trans_a, fused.trans_a);
  EXPECT_EQ(plain.d.rows, fused.d.rows);
  EXPECT_NE(DescribeSpec(plain).find("epilogue 1 + our epilogue pass"), std::string::npos)
      << DescribeSpec(plain);
}

}  // namespace
}  // namespace tiletune::runtime::cuda
