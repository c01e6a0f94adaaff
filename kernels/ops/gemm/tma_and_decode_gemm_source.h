#pragma once

#include <string_view>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/tma_and_decode_gemm_space.h"

namespace tiletune::kernels::gemm {

inline constexpr std::string_view kTmaWsGemmName = "tma_ws_gemm";
inline constexpr std::string_view kTmaDecodeGemmName = "tma_decode_gemm";
inline constexpr std::string_view kMmaDecodeGemmName = "mma_decode_gemm";

// The source of one variant of each family (tma_and_decode_gemm_space.h
// says which is which) for the key on the target: Config, the key's
// epilogue chain, an extern "C" entry named after the variant and its
// launch geometry, the TMA families' tensor maps included. `planted_fault`
// as tile_gemm's. Throw std::invalid_argument when the variant lacks a
// parameter.
KernelSource TmaWsGemmSource(const v1::KernelKey& key, const GemmTarget& target,
                             const Variant& variant, int64_t planted_fault);
KernelSource TmaDecodeGemmSource(const v1::KernelKey& key, const GemmTarget& target,
                                 const Variant& variant, int64_t planted_fault);
KernelSource MmaDecodeGemmSource(const v1::KernelKey& key, const GemmTarget& target,
                                 const Variant& variant, int64_t planted_fault);

}  // namespace tiletune::kernels::gemm
