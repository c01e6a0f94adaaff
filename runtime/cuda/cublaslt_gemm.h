#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "runtime/cuda/cublaslt_gemm_spec.h"
#include "runtime/cuda/cublaslt_library.h"
#include "tiletune/v1/records.pb.h"

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

// Which of cuBLASLt's algorithms a plan runs: the heuristic's
// `heuristic_index`-th of the `heuristic_requested` it is asked for, or
// `chosen` when set (an algorithm an earlier plan of the key described,
// e.g. a record's baseline_algorithm).
struct CublasLtAlgorithmChoice {
  int heuristic_requested = 1;
  int heuristic_index = 0;
  const v1::VendorAlgorithm* chosen = nullptr;
};

// A key's GEMM planned with cuBLASLt (cublaslt_gemm_spec.h says how the key
// maps): f32 scale, the spec's epilogue, one algorithm for a 32 MiB
// workspace.
class CublasLtGemm {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;

  // `bias` is the device address of the bias when the spec folds one (the
  // heuristic reads its alignment), else null. A chosen algorithm that this
  // library does not accept (made by another version, refused by
  // cublasLtMatmulAlgoCheck, needing more workspace) is replaced by the
  // heuristic's first, and algorithm() says why. Throws std::runtime_error
  // naming the cuBLASLt call that failed, or saying the heuristic offered no
  // algorithm (or fewer than the index asked for).
  CublasLtGemm(const CublasLtLibrary& library, const CublasLtGemmSpec& spec, const void* bias,
               const CublasLtAlgorithmChoice& choice = {});
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // Queues the call on `stream` (null: the legacy default stream). Throws
  // like the constructor.
  void Enqueue(const CublasLtOperands& operands, CUstream stream = nullptr) const;
  // A gated spec's two calls (CublasLtGemmSpec.gated): `operands` with our
  // B, then with `b_up`, into the two halves of each row of `products`
  // (GateProductsBytes of them), which the epilogue pass then gates.
  void EnqueueGated(CublasLtOperands operands, const void* b_up, void* products,
                    CUstream stream = nullptr) const;
  static size_t GateProductsBytes(const CublasLtGemmSpec& spec);

  const void* bias() const { return bias_; }
  // The algorithm it runs; its description names it (DescribeCublasLtAlgorithm)
  // and, when a chosen one was refused, which and why.
  const v1::VendorAlgorithm& algorithm() const { return algorithm_; }

 private:
  // Plans `chosen`; why the library does not accept it, nullopt when it does.
  std::optional<std::string> Accept(const v1::VendorAlgorithm& chosen);
  // Plans the heuristic's `index`-th of `requested`; the number it offered.
  int PlanFromHeuristic(int requested, int index);
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
  cublasLtMatmulHeuristicResult_t plan_{};  // the algorithm run and its workspace
  v1::VendorAlgorithm algorithm_;
};

}  // namespace tiletune::runtime::cuda
