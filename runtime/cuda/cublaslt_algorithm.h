#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/cuda/cublaslt_gemm_spec.h"
#include "runtime/cuda/cublaslt_library.h"

namespace tiletune::runtime::cuda {

// What a cuBLASLt algorithm is configured as (cublasLtMatmulAlgoConfigGetAttribute):
// its attributes by name, in the order shown ("id", "tile", "stages",
// "split-k", "reduction", "swizzle", "custom", "inner shape", "cluster"),
// each an id of the library's enums; those the library could not tell are
// left out.
struct CublasLtAlgoConfig {
  std::vector<std::pair<std::string_view, int64_t>> values;
};

CublasLtAlgoConfig ReadAlgoConfig(const CublasLtApi& api, const cublasLtMatmulAlgo_t& algo);

// "GELU_BIAS" for CUBLASLT_EPILOGUE_GELU_BIAS (the epilogues tiletune
// uses); "epilogue N" for any other.
std::string CublasLtEpilogueName(uint32_t epilogue);

// "cublasLt algo 3 of 8 (fused epilogue GELU_BIAS, workspace 4194304 bytes,
// id 66, tile 18, stages 22, ...)": the heuristic's `index`-th of the
// `results` it offered, what of the key the library computes for `spec`
// (its epilogue, the scale as alpha and the residual as C; "plain product"
// when nothing, "+ our epilogue pass" when the pass computes the chain), the
// workspace it needs and its configuration.
std::string DescribeCublasLtAlgorithm(int index, int results, const CublasLtGemmSpec& spec,
                                      uint64_t workspace_bytes, const CublasLtAlgoConfig& config);

// The algorithm as VendorAlgorithm.algo keeps it, and back: nullopt unless
// `bytes` has exactly an algorithm's size.
std::string AlgoBytes(const cublasLtMatmulAlgo_t& algo);
std::optional<cublasLtMatmulAlgo_t> AlgoOfBytes(std::string_view bytes);

}  // namespace tiletune::runtime::cuda
