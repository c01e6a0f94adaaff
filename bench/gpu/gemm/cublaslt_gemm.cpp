#include "bench/gpu/gemm/cublaslt_gemm.h"

#include <stdexcept>

#include <fmt/format.h>

namespace tiletune::bench {

namespace lt = runtime::cuda;

CublasLtGemm::CublasLtGemm(const lt::CublasLtLibrary& library, const GemmShape& shape,
                           const void* bias)
    : library_(library), api_(library.api()) {
  // A failure releases what was created before it (no destructor runs for
  // an object whose constructor throws).
  struct Undo {
    CublasLtGemm* self;
    bool done = false;
    ~Undo() {
      if (!done) self->Release();
    }
  } undo{this};
  library_.Check(api_.cublasLtCreate(&handle_), "cublasLtCreate");
  library_.Check(api_.cublasLtMatmulDescCreate(&desc_, lt::CUBLAS_COMPUTE_32F, lt::CUDA_R_32F),
                 "cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F, CUDA_R_32F)");
  const int32_t trans_a = lt::CUBLAS_OP_T, trans_b = lt::CUBLAS_OP_N;
  library_.Check(api_.cublasLtMatmulDescSetAttribute(desc_, lt::CUBLASLT_MATMUL_DESC_TRANSA,
                                                     &trans_a, sizeof(trans_a)),
                 "cublasLtMatmulDescSetAttribute(TRANSA)");
  library_.Check(api_.cublasLtMatmulDescSetAttribute(desc_, lt::CUBLASLT_MATMUL_DESC_TRANSB,
                                                     &trans_b, sizeof(trans_b)),
                 "cublasLtMatmulDescSetAttribute(TRANSB)");
  const uint32_t epilogue = bias ? lt::CUBLASLT_EPILOGUE_GELU_BIAS : lt::CUBLASLT_EPILOGUE_DEFAULT;
  library_.Check(api_.cublasLtMatmulDescSetAttribute(desc_, lt::CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                     &epilogue, sizeof(epilogue)),
                 "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  if (bias) {
    library_.Check(api_.cublasLtMatmulDescSetAttribute(desc_, lt::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                       &bias, sizeof(bias)),
                   "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  const auto m = static_cast<uint64_t>(shape.m), n = static_cast<uint64_t>(shape.n),
             k = static_cast<uint64_t>(shape.k);
  // The mapping of the header's comment: (rows, cols, ld) of each operand.
  library_.Check(api_.cublasLtMatrixLayoutCreate(&a_, lt::CUDA_R_16BF, k, n, shape.k),
                 "cublasLtMatrixLayoutCreate(A: our B, k x n, ld k)");
  library_.Check(api_.cublasLtMatrixLayoutCreate(&b_, lt::CUDA_R_16BF, k, m, shape.k),
                 "cublasLtMatrixLayoutCreate(B: our A^T, k x m, ld k)");
  library_.Check(api_.cublasLtMatrixLayoutCreate(&c_, lt::CUDA_R_16BF, n, m, shape.n),
                 "cublasLtMatrixLayoutCreate(C/D: our C^T, n x m, ld n)");
  library_.Check(api_.cublasLtMatmulPreferenceCreate(&preference_),
                 "cublasLtMatmulPreferenceCreate");
  const uint64_t workspace = kWorkspaceBytes;
  library_.Check(
      api_.cublasLtMatmulPreferenceSetAttribute(
          preference_, lt::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)),
      "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  int returned = 0;
  library_.Check(api_.cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, c_, preference_, 1,
                                                     &heuristic_, &returned),
                 "cublasLtMatmulAlgoGetHeuristic");
  if (returned < 1 || heuristic_.state != lt::CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(
        fmt::format("cublasLtMatmulAlgoGetHeuristic found no algorithm for "
                    "{}x{}x{} ({})",
                    shape.m, shape.n, shape.k, bias ? "GELU_BIAS" : "DEFAULT"));
  }
  algorithm_ = fmt::format("cublasLt heuristic #0 (workspace {} bytes, waves {:.2f})",
                           heuristic_.workspaceSize, heuristic_.wavesCount);
  undo.done = true;
}

CublasLtGemm::~CublasLtGemm() {
  Release();
}

void CublasLtGemm::Release() {
  // Destroy results are ignored: nothing can be done about them here.
  if (preference_) api_.cublasLtMatmulPreferenceDestroy(preference_);
  for (auto* layout : {c_, b_, a_}) {
    if (layout) api_.cublasLtMatrixLayoutDestroy(layout);
  }
  if (desc_) api_.cublasLtMatmulDescDestroy(desc_);
  if (handle_) api_.cublasLtDestroy(handle_);
  preference_ = nullptr;
  a_ = b_ = c_ = nullptr;
  desc_ = nullptr;
  handle_ = nullptr;
}

void CublasLtGemm::Enqueue(const void* a, const void* b, void* c, void* workspace) const {
  const float alpha = 1.0f, beta = 0.0f;
  // cuBLASLt's A is our B and its B our A (see the header); C = D with
  // beta 0, so C is never read.
  library_.Check(api_.cublasLtMatmul(handle_, desc_, &alpha, b, a_, a, b_, &beta, c, c_, c, c_,
                                     &heuristic_.algo, workspace, kWorkspaceBytes, nullptr),
                 "cublasLtMatmul");
}

}  // namespace tiletune::bench
