#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/cuda/cuda_driver_api.h"

namespace tiletune::runtime::cuda {

// The few types and values of cuBLASLt that tiletune uses, mirroring
// cublasLt.h, cublas_api.h and library_types.h of CUDA 13 (the same in
// CUDA 12): the build needs no CUDA toolkit. Each value names its source.
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque_st*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque_st*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque_st*;

// cublasLt.h: `typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;`
// Plain bytes the library documents as storable and reusable with the same
// library version (records keep them: VendorAlgorithm.algo).
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
static_assert(sizeof(cublasLtMatmulAlgo_t) == 64, "VendorAlgorithm.algo holds 64 bytes");
// cublasLt.h: cublasLtMatmulHeuristicResult_t, field for field.
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

// cublas_api.h, cublasStatus_t.
inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
// cublas_api.h, cublasOperation_t.
inline constexpr int32_t CUBLAS_OP_N = 0;
inline constexpr int32_t CUBLAS_OP_T = 1;
// cublas_api.h, cublasComputeType_t.
inline constexpr int CUBLAS_COMPUTE_32F = 68;
inline constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
// library_types.h, cudaDataType_t.
inline constexpr int CUDA_R_32F = 0;
inline constexpr int CUDA_R_16F = 2;
inline constexpr int CUDA_R_16BF = 14;
// cublasLt.h, cublasLtMatmulDescAttributes_t.
inline constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;
inline constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;
inline constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
inline constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
// cublasLt.h, cublasLtMatrixLayoutAttribute_t: BATCH_COUNT is int32_t,
// STRIDED_BATCH_OFFSET int64_t (elements).
inline constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;
inline constexpr int CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
// cublasLt.h, cublasLtEpilogue_t (uint32_t attribute values): RELU (2),
// BIAS (4) and GELU (32) are bits; RELU_BIAS = 6, GELU_BIAS = 36.
inline constexpr uint32_t CUBLASLT_EPILOGUE_DEFAULT = 1;
inline constexpr uint32_t CUBLASLT_EPILOGUE_RELU = 2;
inline constexpr uint32_t CUBLASLT_EPILOGUE_BIAS = 4;
inline constexpr uint32_t CUBLASLT_EPILOGUE_RELU_BIAS = 6;
inline constexpr uint32_t CUBLASLT_EPILOGUE_GELU = 32;
inline constexpr uint32_t CUBLASLT_EPILOGUE_GELU_BIAS = 36;
// cublasLt.h, cublasLtMatmulPreferenceAttributes_t (uint64_t value).
inline constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;
// cublasLt.h, cublasLtMatmulAlgoConfigAttributes_t: ID is int32_t, TILE_ID
// to STAGES_ID uint32_t, INNER_SHAPE_ID and CLUSTER_SHAPE_ID uint16_t (CUDA
// 12 and later).
inline constexpr int CUBLASLT_ALGO_CONFIG_ID = 0;
inline constexpr int CUBLASLT_ALGO_CONFIG_TILE_ID = 1;
inline constexpr int CUBLASLT_ALGO_CONFIG_SPLITK_NUM = 2;
inline constexpr int CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME = 3;
inline constexpr int CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING = 4;
inline constexpr int CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION = 5;
inline constexpr int CUBLASLT_ALGO_CONFIG_STAGES_ID = 6;
inline constexpr int CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID = 7;
inline constexpr int CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID = 8;

// Entry points of libcublasLt, by the names cublasLt.h declares. Streams
// are CUstream: cudaStream_t is the same handle.
struct CublasLtApi {
  size_t (*cublasLtGetVersion)();
  const char* (*cublasLtGetStatusName)(cublasStatus_t status);
  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t* handle);
  cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t handle);
  cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t* desc, int compute_type,
                                             int scale_type);
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t desc);
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t desc, int attribute,
                                                   const void* value, size_t bytes);
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t* layout, int type,
                                               uint64_t rows, uint64_t cols, int64_t ld);
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t layout);
  cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t layout, int attribute,
                                                     const void* value, size_t bytes);
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t* preference);
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t preference);
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t preference,
                                                         int attribute, const void* value,
                                                         size_t bytes);
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
      cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
      cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
      cublasLtMatmulPreference_t preference, int requested,
      cublasLtMatmulHeuristicResult_t* results, int* returned);
  cublasStatus_t (*cublasLtMatmulAlgoCheck)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                            cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                            cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                            const cublasLtMatmulAlgo_t* algo,
                                            cublasLtMatmulHeuristicResult_t* result);
  cublasStatus_t (*cublasLtMatmulAlgoConfigGetAttribute)(const cublasLtMatmulAlgo_t* algo,
                                                         int attribute, void* value, size_t bytes,
                                                         size_t* written);
  cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                   const void* alpha, const void* a, cublasLtMatrixLayout_t a_desc,
                                   const void* b, cublasLtMatrixLayout_t b_desc, const void* beta,
                                   const void* c, cublasLtMatrixLayout_t c_desc, void* d,
                                   cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo,
                                   void* workspace, size_t workspace_bytes, CUstream stream);
};

// libcublasLt opened with dlopen, kept loaded for the life of the process
// (its CUDA runtime registers atexit handlers).
class CublasLtLibrary {
 public:
  // libcublasLt.so.13, .so.12, .so, then the same in /usr/local/cuda/lib64;
  // nullptr with `why` (the loaders' messages, or the missing entry point).
  static std::unique_ptr<CublasLtLibrary> Open(std::string* why);

  const CublasLtApi& api() const { return api_; }
  // "<call> failed: CUBLAS_STATUS_X (status N)".
  std::string Describe(cublasStatus_t status, const std::string& call) const;
  // Throws std::runtime_error with Describe's message unless `status` is success.
  void Check(cublasStatus_t status, const std::string& call) const;

 private:
  explicit CublasLtLibrary(const CublasLtApi& api) : api_(api) {}
  const CublasLtApi api_;
};

}  // namespace tiletune::runtime::cuda
