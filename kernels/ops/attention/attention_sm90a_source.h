#pragma once

#include <string_view>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/attention/attention_sm90a_space.h"

namespace tiletune::kernels::attention {

inline constexpr std::string_view kTmaWsAttentionName = "tma_ws_attention";
inline constexpr std::string_view kDecodeAttentionName = "decode_attention";

// The source of one variant of each sm_90a family (attention_sm90a_space.h)
// for the key: Config, the key's epilogue chain, an extern "C" entry named
// after the variant, its launch geometry and the tensor maps of q, k and v
// the launcher encodes into tt_attention_tma_args. `planted_fault` as every
// GPU template's. Throw std::invalid_argument when the variant lacks a
// parameter.
KernelSource TmaWsAttentionSource(const v1::KernelKey& key, const Sm90aAttentionProblem& problem,
                                  const Variant& variant, int64_t planted_fault);
KernelSource DecodeAttentionSource(const v1::KernelKey& key, const Sm90aAttentionProblem& problem,
                                   const Variant& variant, int64_t planted_fault);

}  // namespace tiletune::kernels::attention
