#pragma once

#include <cstddef>
#include <string>

#include "bench/gpu/gemm/gemm_shapes.h"
#include "runtime/cuda/cublaslt_library.h"

namespace tiletune::bench {

// One row-major bf16 GEMM (gemm_shapes.h's layout) planned with cuBLASLt:
// f32 compute and scale, bf16 output, the heuristic's first algorithm for a
// 32 MiB workspace. With a bias pointer it uses the GELU_BIAS epilogue
// (D = GELU(A*B + bias), GELU in its tanh form), otherwise the default one.
//
// cuBLASLt is column-major. A row-major matrix with leading dimension ld is
// the column-major view of its transpose with the same ld, so
// C = A*B (row-major) is computed as C^T = B^T * A^T (column-major):
//   cuBLASLt A := our B. Our B is k x n column-major (ldb = k): the
//       column-major matrix k x n, ld k; TRANSA = T makes it B^T (n x k).
//   cuBLASLt B := our A. Our A is m x k row-major (lda = k): the
//       column-major matrix k x m, ld k, which is A^T; TRANSB = N.
//   cuBLASLt C, D := our C. m x n row-major (ldc = n): the column-major
//       matrix n x m, ld n, which is C^T; cuBLASLt's (m, n, k) = (n, m, k).
//   Bias: cuBLASLt adds bias[row] of D (n x m), i.e. bias[column] of our
//       C: the per-output-feature bias, n bf16 values (the D type).
class CublasLtGemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // Throws std::runtime_error naming the cuBLASLt call that failed, or
  // saying the heuristic found no algorithm.
  CublasLtGemm(const runtime::cuda::CublasLtLibrary& library, const GemmShape& shape,
               const void* bias);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // Queues C = A*B (+ epilogue) on the legacy default stream. Device
  // addresses; `workspace` holds kWorkspaceBytes. Throws like the constructor.
  void Enqueue(const void* a, const void* b, void* c, void* workspace) const;

  // "cublasLt heuristic #0 (workspace N bytes, waves W)".
  const std::string& algorithm() const { return algorithm_; }

 private:
  // Destroys whatever exists of the plan; safe to call twice.
  void Release();

  const runtime::cuda::CublasLtLibrary& library_;
  const runtime::cuda::CublasLtApi& api_;
  runtime::cuda::cublasLtHandle_t handle_ = nullptr;
  runtime::cuda::cublasLtMatmulDesc_t desc_ = nullptr;
  runtime::cuda::cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  runtime::cuda::cublasLtMatmulPreference_t preference_ = nullptr;
  runtime::cuda::cublasLtMatmulHeuristicResult_t heuristic_{};
  std::string algorithm_;
};

}  // namespace tiletune::bench
