#pragma once

#include <cstddef>
#include <string>

#include "runtime/cuda/cublaslt_gemm_spec.h"
#include "runtime/cuda/cublaslt_library.h"

namespace tiletune::runtime::cuda {

// Device addresses of one call. `residual` is C (read with beta = 1) when
// the spec folds a residual_add, else null; `bias` likewise.
struct CublasLtOperands {
  const void* a = nullptr;  // our A
  const void* b = nullptr;  // our B
  const void* residual = nullptr;
  void* d = nullptr;  // our C
  float alpha = 1.0f;
  void* workspace = nullptr;  // kWorkspaceBytes
};

// A key's GEMM planned with cuBLASLt (cublaslt_gemm_spec.h says how the key
// maps): f32 scale, the spec's epilogue, the heuristic's first algorithm
// for a 32 MiB workspace.
class CublasLtGemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // `bias` is the device address of the bias when the spec folds one (the
  // heuristic reads its alignment), else null. Throws std::runtime_error
  // naming the cuBLASLt call that failed, or saying the heuristic found no
  // algorithm for the spec.
  CublasLtGemm(const CublasLtLibrary& library, const CublasLtGemmSpec& spec, const void* bias);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // Queues the call on `stream` (null: the legacy default stream). Throws
  // like the constructor.
  void Enqueue(const CublasLtOperands& operands, CUstream stream = nullptr) const;

  const void* bias() const { return bias_; }
  // "cublasLt heuristic #0 (workspace N bytes, waves W)".
  const std::string& algorithm() const { return algorithm_; }

 private:
  // Destroys whatever exists of the plan; safe to call twice.
  void Release();
  void SetDesc(int attribute, const void* value, size_t bytes, const char* name);
  // Creates *layout for `matrix` with the spec's batch.
  void CreateLayout(cublasLtMatrixLayout_t* layout, const CublasLtMatrix& matrix, const char* name);

  const CublasLtLibrary& library_;
  const CublasLtApi& api_;
  const CublasLtGemmSpec spec_;
  const void* const bias_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  std::string algorithm_;
};

}  // namespace tiletune::runtime::cuda
