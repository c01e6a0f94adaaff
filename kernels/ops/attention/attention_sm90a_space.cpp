#include "kernels/ops/attention/attention_sm90a_space.h"

#include <algorithm>

namespace tiletune::kernels::attention {
namespace {

// One 128-byte swizzled row of 16-bit elements: the column panel both
// kernels copy and multiply (head_dim is 1 or 2 of them).
constexpr int64_t kPanel = 64;
constexpr int64_t kPanelRowBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 1024;
constexpr int64_t kBarrierBytes = 8;
constexpr int64_t kWarpgroupThreads = 128;
constexpr int64_t kWarpThreads = 32;
constexpr int64_t kConsumerRows = 64;  // one wgmma M
// A decode warp multiplies 16 to 64 keys of each block (its slice), and a
// block has at most 16 warps (8 at head_dim 128: registers).
constexpr int64_t kMinSlice = 16, kMaxSlice = 64;
constexpr int64_t kMaxThreads = 512, kMaxThreadsHeadDim128 = 256;
// A portable cluster holds at most 8 blocks.
constexpr int64_t kMaxSplit = 8;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t Panels(const Sm90aAttentionProblem& p) {
  return p.head_dim / kPanel;
}

std::optional<std::string> UnsupportedOperands(const Sm90aAttentionProblem& p) {
  if (p.element_bytes != 2) return std::string("q, k and v are bf16 or f16");
  if (p.head_dim != 64 && p.head_dim != 128) return std::string("head_dim is 64 or 128");
  return std::nullopt;
}

}  // namespace

std::optional<std::string> UnsupportedTmaWsAttention(const Sm90aAttentionProblem& p) {
  return UnsupportedOperands(p);
}

std::optional<std::string> UnsupportedDecodeAttention(const Sm90aAttentionProblem& p) {
  if (auto why = UnsupportedOperands(p)) return why;
  if (p.q_len > kDecodeMaxQueryLen) {
    return "a decode kernel takes q_len <= " + std::to_string(kDecodeMaxQueryLen);
  }
  if (p.q_heads / p.kv_heads * p.q_len > kDecodeMaxRows) {
    return "q_heads / kv_heads x q_len (" + std::to_string(p.q_heads / p.kv_heads * p.q_len) +
           ") packed rows exceed " + std::to_string(kDecodeMaxRows);
  }
  return std::nullopt;
}

int64_t DecodeRows(const Sm90aAttentionProblem& p) {
  return std::max<int64_t>(16, CeilDiv(p.q_heads / p.kv_heads * p.q_len, 16) * 16);
}

int64_t TmaWsAttentionBlockRows(const Variant& v) {
  return v.at("consumers") * kConsumerRows;
}

int64_t TmaWsAttentionThreads(const Variant& v) {
  return (1 + v.at("consumers")) * kWarpgroupThreads;
}

int64_t DecodeAttentionThreads(const Sm90aAttentionProblem& p, const Variant& v) {
  return DecodeRows(p) / 16 * v.at("warps_k") * kWarpThreads;
}

AttentionLaunch TmaWsAttentionLaunch(const Sm90aAttentionProblem& p, const Variant& v) {
  return {{CeilDiv(p.q_len, TmaWsAttentionBlockRows(v)) * p.q_heads * p.batch, 1, 1},
          v.at("persistent") != 0 ? 1 : 0};
}

AttentionLaunch DecodeAttentionLaunch(const Sm90aAttentionProblem& p, const Variant& v) {
  return {{v.at("split"), p.kv_heads, p.batch}, 0};
}

int64_t TmaWsAttentionSharedBytes(const Sm90aAttentionProblem& p, const Variant& v) {
  const int64_t panels = Panels(p), stages = v.at("stages");
  const int64_t q = v.at("consumers") * panels * kConsumerRows * kPanelRowBytes;
  const int64_t kv = panels * v.at("block_k") * kPanelRowBytes;  // one K or V block
  return q + 2 * stages * kv + (2 + 3 * stages) * kBarrierBytes + kSwizzleAtomBytes;
}

int64_t DecodeAttentionSharedBytes(const Sm90aAttentionProblem& p, const Variant& v) {
  const int64_t stages = v.at("stages");
  const int64_t ring = 2 * stages * Panels(p) * v.at("block_k") * kPanelRowBytes;
  const int64_t warps = DecodeAttentionThreads(p, v) / kWarpThreads;
  const int64_t partials = warps * (16 * p.head_dim + 2 * 16) * int64_t{sizeof(float)};
  return std::max(ring, partials) + 2 * stages * kBarrierBytes + kSwizzleAtomBytes;
}

SearchSpace TmaWsAttentionSpace(const Sm90aAttentionProblem& p, const DeviceDescription& device) {
  SearchSpace space;
  // overlap 1: block b's scores and softmax run while block b - 1's P V is
  // in flight; pingpong 1: two consumers take turns to issue their products;
  // persistent 1: one block an SM walks the tiles, loading the next tile's
  // Q and keys while this one's finish.
  space.Add("block_k", {64, 128})
      .Add("consumers", {2, 3})
      .Add("stages", {2, 3, 4})
      .Add("overlap", {0, 1})
      .Add("pingpong", {0, 1})
      .Add("persistent", {0, 1});
  space.Require("the device runs sm_90a (TMA, wgmma, setmaxnreg)",
                [device](const Variant&) { return device.has_sm90a; });
  // 3 consumers get 160 registers a thread after reallocation: O and S of
  // head_dim 128 do not fit beside P.
  space.Require("three consumer warpgroups only for head_dim 64",
                [p](const Variant& v) { return v.at("consumers") == 2 || p.head_dim == 64; });
  // overlap keeps S and P live beside O: of 128 keys they spill with three
  // consumers' registers, or beside the mask tensor's rows at head_dim 128.
  space.Require(
      "overlap takes 128-key blocks only with two consumers and no mask tensor at "
      "head_dim 128",
      [p](const Variant& v) {
        if (v.at("overlap") == 0 || v.at("block_k") == 64) return true;
        return v.at("consumers") == 2 && !(p.mask_tensor && p.head_dim == 128);
      });
  space.Require("pingpong takes turns between two overlapping consumers", [](const Variant& v) {
    return v.at("pingpong") == 0 || (v.at("overlap") == 1 && v.at("consumers") == 2);
  });
  // What a persistent block hides (the next tile's first loads) pays only
  // beside the schedules that keep the tensor cores busy (on an H100, 2.5 %
  // faster than the best non-persistent variant at S = 4096 without a
  // mask). Causal tiles differ in length: striding over them one by one
  // was 5-7 % slower than the hardware's block scheduler at S = 2048 and
  // 4096, so persistent causal blocks take pairs of tiles of equal length.
  space.Require("persistent only with overlap",
                [](const Variant& v) { return v.at("persistent") == 0 || v.at("overlap") == 1; });
  space.Require("shared memory per block <= " + std::to_string(device.max_shared_bytes_per_block),
                [p, device](const Variant& v) {
                  return TmaWsAttentionSharedBytes(p, v) <= device.max_shared_bytes_per_block;
                });
  space.Require("no more key blocks in flight than the keys have", [p](const Variant& v) {
    return v.at("stages") == 2 || v.at("stages") <= CeilDiv(p.kv_len, v.at("block_k"));
  });
  return space;
}

SearchSpace DecodeAttentionSpace(const Sm90aAttentionProblem& p, const DeviceDescription& device) {
  SearchSpace space;
  space.Add("block_k", {64, 128})
      .Add("warps_k", {1, 2, 4})
      .Add("stages", {2, 4})
      .Add("split", {1, 2, 4, 8});
  space.Require("the device runs sm_90a (TMA, thread-block clusters)",
                [device](const Variant&) { return device.has_sm90a; });
  space.Require("a warp's key slice (block_k / warps_k) is " + std::to_string(kMinSlice) + " to " +
                    std::to_string(kMaxSlice) + " keys",
                [](const Variant& v) {
                  const int64_t slice = v.at("block_k") / v.at("warps_k");
                  return slice >= kMinSlice && slice <= kMaxSlice;
                });
  // A warp holds Q (head_dim / 4 registers), O (head_dim / 2), S and P;
  // at head_dim 128 more than the 128 a thread of a 512-thread block gets.
  const int64_t max_threads = p.head_dim == 128 ? kMaxThreadsHeadDim128 : kMaxThreads;
  space.Require(
      "at most " + std::to_string(max_threads) + " threads a block at head_dim " +
          std::to_string(p.head_dim),
      [p, max_threads](const Variant& v) { return DecodeAttentionThreads(p, v) <= max_threads; });
  space.Require("split <= " + std::to_string(kMaxSplit) +
                    " and every split has 2 key blocks per stage or split is 1",
                [p](const Variant& v) {
                  const int64_t split = v.at("split");
                  const int64_t blocks = CeilDiv(p.kv_len, v.at("block_k"));
                  return split == 1 || (split <= kMaxSplit && blocks >= 2 * split * v.at("stages"));
                });
  space.Require("no more key blocks in flight than a split has", [p](const Variant& v) {
    const int64_t blocks = CeilDiv(CeilDiv(p.kv_len, v.at("block_k")), v.at("split"));
    return v.at("stages") == 2 || v.at("stages") <= blocks;
  });
  space.Require("shared memory per block <= " + std::to_string(device.max_shared_bytes_per_block),
                [p, device](const Variant& v) {
                  return DecodeAttentionSharedBytes(p, v) <= device.max_shared_bytes_per_block;
                });
  return space;
}

}  // namespace tiletune::kernels::attention
