#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::attention {

inline constexpr std::string_view kOpName = "attention";

// The head dims attention kernels are written for.
inline constexpr int64_t kHeadDims[] = {64, 128, 256};

// The softmax scale the daemon tunes and validates with: a runtime value
// (tt_attention_args.scale), so any scale runs the same kernel.
inline constexpr double kValidationScale = 0.125;

// attention: o = softmax(scale * q kᵀ + mask) v per (batch, query head),
// each KV head serving q_heads / kv_heads query heads, then the chain.
const OpSpec& AttentionOp();

// The (query, key) pairs a key's mask lets through, per batch entry and
// query head: q_len * kv_len, fewer where causal.
int64_t VisiblePairs(const v1::KernelKey& key);

}  // namespace tiletune::kernels::attention
