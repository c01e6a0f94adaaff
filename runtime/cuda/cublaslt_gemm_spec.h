#pragma once

#include <cstdint>
#include <string>

#include "kernels/ops/gemm/blas_epilogue.h"
#include "runtime/cuda/cublaslt_library.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::runtime::cuda {

// One operand as cuBLASLt sees it (column-major): element type, rows,
// columns, leading dimension, and elements from one batch entry to the next.
struct CublasLtMatrix {
  int type = CUDA_R_32F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

// A GEMM key in cuBLASLt's terms, derived from the key alone (no device).
//
// cuBLASLt is column-major; our C (m x n) is row-major with ldc = n, which
// is the column-major n x m matrix C^T. So C = A*B is computed as
// C^T = B^T * A^T: cuBLASLt's A is our B and its B is our A.
//   our B row-major (k x n, ld n) reads column-major as B^T (n x k, ld n):
//       TRANSA = N. Column-major (ld k) it is B itself (k x n): TRANSA = T.
//   our A row-major (m x k, ld k) reads column-major as A^T (k x m, ld k):
//       TRANSB = N. Column-major (ld m) it is A itself (m x k): TRANSB = T.
//   C and D: n x m, ld n; cuBLASLt's (m, n, k) is our (n, m, k).
// A bias per column of our C is a bias per row of D, as cuBLASLt wants it.
// Batches are strided: the dense operands lie one after another, and one
// bias serves every batch entry (BIAS_BATCH_STRIDE stays 0).
struct CublasLtGemmSpec {
  int compute_type = CUBLAS_COMPUTE_32F;
  int scale_type = CUDA_R_32F;
  int32_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  CublasLtMatrix a, b, d;  // cuBLASLt's A (our B), B (our A), C = D (our C)
  int32_t batch = 1;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  kernels::gemm::BlasEpilogue fold;  // which chain ops feed alpha, C and the bias
  // The library computes the plain product and our element-wise pass the
  // whole chain after it (fold then holds nothing).
  bool epilogue_pass = false;
  // A gated key: two calls, with our B and then b_up, write the two
  // products side by side into a [batch][m][2n] buffer (D's ld is 2n); the
  // pass gates them into our C (gemm_epilogue_pass.h).
  bool gated = false;
};

// Throws std::invalid_argument naming the field when cuBLASLt cannot run
// the key: inputs other than f32, f16, bf16; an output other than the input
// dtype or f32 (f32 inputs: f32 only). f32 inputs compute in
// CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 when the key allows
// tf32; 16-bit inputs in CUBLAS_COMPUTE_32F.
// A chain that does not fold into cuBLASLt's epilogue is left to the pass
// (epilogue_pass).
CublasLtGemmSpec CublasLtGemmSpecOf(const v1::KernelKey& key);

// `spec` with the whole chain left to our epilogue pass: the library
// computes the plain product (epilogue DEFAULT, alpha 1, no C, no bias).
CublasLtGemmSpec WithEpiloguePass(CublasLtGemmSpec spec);

// The cuBLASLt epilogue of a folded chain: DEFAULT, BIAS, RELU, RELU_BIAS,
// GELU or GELU_BIAS (an unfused chain is DEFAULT: the library computes the
// plain product).
uint32_t CublasLtEpilogueOf(const kernels::gemm::BlasEpilogue& fold);

// "TRANSA=T A 64x32 ld 64, TRANSB=N B ..., D ..., batch 1, epilogue 36,
// compute 68": what the heuristic was asked, for error messages.
std::string DescribeSpec(const CublasLtGemmSpec& spec);

}  // namespace tiletune::runtime::cuda
