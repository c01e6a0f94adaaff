#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/core/device_description.h"
#include "kernels/core/search_space.h"

namespace tiletune::kernels::attention {

// The sm_90a attention families, each with its own space, launch and
// source (attention_sm90a_source.cpp):
//
//   tma_ws_attention (device/attention_sm90a_wgmma.h): prefill; a producer
//                    warpgroup streams K/V by TMA, 2-3 consumer warpgroups
//                    of 64 query rows run wgmma and the online softmax.
//   decode_attention (device/attention_decode_split_kv.h): q_len <= 16; the
//                    query heads of a KV head packed as MMA rows, the KV
//                    split over a thread-block cluster and merged through
//                    distributed shared memory in one launch.
//
// What they read of a key.
struct Sm90aAttentionProblem {
  int64_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, head_dim = 64;
  int64_t element_bytes = 2;  // of q, k, v
  bool causal = false;
  bool mask_tensor = false;  // an additive mask tensor
  bool bshd = true;          // else BHSD
  bool write_lse = false;
};

// Why a family cannot serve the problem (naming the rule), or nullopt.
std::optional<std::string> UnsupportedTmaWsAttention(const Sm90aAttentionProblem& problem);
std::optional<std::string> UnsupportedDecodeAttention(const Sm90aAttentionProblem& problem);

// The spaces on one device: empty (their rules say why) without sm_90a or
// where nothing fits its shared memory.
SearchSpace TmaWsAttentionSpace(const Sm90aAttentionProblem& problem,
                                const DeviceDescription& device);
SearchSpace DecodeAttentionSpace(const Sm90aAttentionProblem& problem,
                                 const DeviceDescription& device);

// Dynamic shared memory of a variant, as the device plans compute it
// (their static_asserts check the launch reserves at least as much).
int64_t TmaWsAttentionSharedBytes(const Sm90aAttentionProblem& problem, const Variant& v);
int64_t DecodeAttentionSharedBytes(const Sm90aAttentionProblem& problem, const Variant& v);

// The decode kernel's MMA rows: the packed query rows (query heads of a KV
// head x q_len) rounded up to 16; the most it takes.
inline constexpr int64_t kDecodeMaxQueryLen = 16;
inline constexpr int64_t kDecodeMaxRows = 64;
int64_t DecodeRows(const Sm90aAttentionProblem& problem);

// Query rows of a tma_ws_attention block (64 a consumer warpgroup), and
// threads of either family's block.
int64_t TmaWsAttentionBlockRows(const Variant& v);
int64_t TmaWsAttentionThreads(const Variant& v);
int64_t DecodeAttentionThreads(const Sm90aAttentionProblem& problem, const Variant& v);

// Each family's launch: its grid (prefill: every tile, a query block of
// one head of one batch entry, on x; decode: the KV splits on x, KV heads
// on y, batch entries on z) and, for a persistent prefill variant, the
// blocks an SM it runs (the launcher caps grid x at SMs x that); 0: all.
struct AttentionLaunch {
  std::array<int64_t, 3> grid;
  int64_t blocks_per_sm = 0;
};
AttentionLaunch TmaWsAttentionLaunch(const Sm90aAttentionProblem& problem, const Variant& v);
AttentionLaunch DecodeAttentionLaunch(const Sm90aAttentionProblem& problem, const Variant& v);

}  // namespace tiletune::kernels::attention
