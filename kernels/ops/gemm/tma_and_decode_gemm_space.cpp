#include "kernels/ops/gemm/tma_and_decode_gemm_space.h"

#include <algorithm>
#include <optional>
#include <string>

namespace tiletune::kernels::gemm {
namespace {

// TMA copies move whole 16-byte runs: a tensor map's row stride is a
// multiple of 16 bytes (cuTensorMapEncodeTiled).
constexpr int64_t kTmaStrideBytes = 16;
// One k box: a 128-byte swizzled row (64 16-bit elements, 32 tf32).
constexpr int64_t kBoxKBytes = 128;
constexpr int64_t kSwizzleAtomBytes = 1024;
constexpr int64_t kBarrierBytes = 8;
// tma_ws_gemm: two consumer warpgroups (gemm_sm90a_tma_ws.h), each holding
// block_m / 2 x block_n fp32 accumulators, or block_m x block_n with
// ping-pong; 128 a thread is what the reallocated registers (232) carry
// without spilling.
constexpr int64_t kConsumers = 2;
constexpr int64_t kWarpgroupThreads = 128;
constexpr int64_t kMaxAccumulators = 128;
// tma_decode_gemm: copies in flight per block (stages x k_boxes boxes):
// fewer starve the memory, more only take shared memory other blocks of
// the SM could use.
constexpr int64_t kMinBoxesInFlight = 6, kMaxBoxesInFlight = 16;
// mma_decode_gemm: one chunk of k per 16-byte load of four lanes, and the
// loads a lane keeps in flight (warp_rows x unroll x 4 registers each).
constexpr int64_t kDecodeChunkK = 32;
constexpr int64_t kMaxLanesLoads = 8;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Operand rows that 16-byte loads (and tensor maps) can stride.
std::optional<std::string> UnalignedOperands(const GemmProblem& p) {
  if (p.lda * p.element_bytes % kTmaStrideBytes != 0 ||
      p.ldb * p.element_bytes % kTmaStrideBytes != 0) {
    return "lda and ldb must be multiples of " + std::to_string(kTmaStrideBytes / p.element_bytes) +
           " elements (" + std::to_string(kTmaStrideBytes) + "-byte rows)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> UnsupportedTmaWsGemm(const GemmProblem& p) {
  if (p.m <= kDecodeMaxRows) {
    return "m <= " + std::to_string(kDecodeMaxRows) + " is for the decode families";
  }
  if (p.a_col_major) return "A row-major only (wgmma reads a shared A K-major)";
  if (p.element_bytes != 2 && !p.b_col_major) {
    return "tf32 takes B column-major only (x @ W.t()): wgmma transposes 16-bit B only";
  }
  return UnalignedOperands(p);
}

std::optional<std::string> UnsupportedTmaDecodeGemm(const GemmProblem& p) {
  if (p.m > kDecodeMaxRows) return "a decode GEMM takes m <= " + std::to_string(kDecodeMaxRows);
  if (p.element_bytes != 2 || p.a_col_major || !p.b_col_major) {
    return "16-bit A row-major and B column-major only (x @ W.t())";
  }
  return UnalignedOperands(p);
}

std::optional<std::string> UnsupportedMmaDecodeGemm(const GemmProblem& p) {
  if (p.gated) return "no gate (tma_decode_gemm and tile_gemm compute gated decode keys)";
  return UnsupportedTmaDecodeGemm(p);
}

int64_t DecodeRows(int64_t m) {
  return std::max<int64_t>(16, CeilDiv(m, 16) * 16);
}

int64_t TmaOutColumns(const GemmProblem& p, int64_t b_rows) {
  return p.gated ? b_rows / 2 : b_rows;
}

int64_t TmaWsConsumerRows(const Variant& v) {
  return v.at("pingpong") ? v.at("block_m") : v.at("block_m") / kConsumers;
}

int64_t TmaWsStagingBoxes(const GemmProblem& p, const Variant& v) {
  if (!v.at("store_tma")) return 0;
  return v.at("store_ring") ? kStoreRingBoxes
                            : TmaOutColumns(p, v.at("block_n")) * p.out_element_bytes / kBoxKBytes;
}

int64_t TmaWsGemmSharedBytes(const GemmProblem& p, const Variant& v) {
  const int64_t bm = v.at("block_m"), bn = v.at("block_n"), stages = v.at("stages");
  const int64_t pipeline = stages * (bm + bn) * kBoxKBytes;
  // Each consumer stages its own rows of a tile, in boxes 128 bytes wide.
  const int64_t staging = kConsumers * TmaWsConsumerRows(v) * TmaWsStagingBoxes(p, v) * kBoxKBytes;
  return pipeline + staging + 2 * stages * kBarrierBytes + kSwizzleAtomBytes;
}

int64_t TmaDecodeGemmSharedBytes(const Variant& v) {
  const int64_t bw = v.at("block_w"), mp = v.at("m_pad"), stages = v.at("stages");
  const int64_t pipeline = stages * v.at("k_boxes") * (bw + mp) * kBoxKBytes;
  const int64_t partial = bw * (mp + 4) * int64_t{sizeof(float)};
  return std::max(pipeline, partial) + stages * kBarrierBytes + kSwizzleAtomBytes;
}

int64_t MmaDecodeGemmSharedBytes(const Variant& v) {
  const int64_t block_n = 8 * v.at("warp_rows") * v.at("warps_n");
  return v.at("warps_k") * 16 * v.at("m_tiles") * (block_n + 4) * int64_t{sizeof(float)};
}

namespace {

// No stage more fits in shared memory.
bool AtTheDeepestPipeline(const GemmProblem& p, const GemmTarget& target, const Variant& v) {
  Variant deeper = v;
  deeper["stages"] = v.at("stages") + 1;
  return TmaWsGemmSharedBytes(p, deeper) > target.max_shared_bytes;
}

}  // namespace

SearchSpace TmaWsGemmSpace(const GemmProblem& p, const GemmTarget& target) {
  SearchSpace space;
  space.Add("block_m", {kTmaWsMinTile, 256})
      .Add("block_n", {kTmaWsMinTile, 256})
      .Add("stages", {2, 3, 4, 5, 6})
      .Add("group_m", {1, 8, 16})
      .Add("store_tma", {0, 1})
      .Add("store_ring", {0, 1})
      .Add("pingpong", {0, 1})
      .Add("cluster_m", {1, 2});
  space.Require("the target has TMA and warpgroup MMA (sm_90a)",
                [target](const Variant&) { return target.warpgroup_mma; });
  space.Require("a consumer holds at most " + std::to_string(kMaxAccumulators) +
                    " accumulators a thread (its rows x block_n / 128)",
                [](const Variant& v) {
                  return TmaWsConsumerRows(v) * v.at("block_n") / kWarpgroupThreads <=
                         kMaxAccumulators;
                });
  // C's copies need 16-byte rows too; where they may, they always pay (the
  // consumers go on while the copy engine writes), so it is not searched.
  space.Require("store_tma exactly when C's rows are multiples of 16 bytes", [p](const Variant& v) {
    return v.at("store_tma") == (p.ldc * p.out_element_bytes % kTmaStrideBytes == 0 ? 1 : 0);
  });
  space.Require("shared memory per block <= " + std::to_string(target.max_shared_bytes),
                [p, target](const Variant& v) {
                  return TmaWsGemmSharedBytes(p, v) <= target.max_shared_bytes;
                });
  // A ring costs two barriers a box instead of two a tile: worth it only
  // for the pipeline stage its smaller staging makes room for.
  space.Require("store_ring only where staging the whole tile leaves no room for the stages",
                [p, target](const Variant& v) {
                  if (!v.at("store_ring")) return true;
                  Variant whole = v;
                  whole["store_ring"] = 0;
                  return v.at("store_tma") && TmaWsStagingBoxes(p, whole) > kStoreRingBoxes &&
                         TmaWsGemmSharedBytes(p, whole) > target.max_shared_bytes;
                });
  space.Require("the deepest pipeline that fits, or one stage less", [p, target](const Variant& v) {
    Variant deeper = v;
    deeper["stages"] = v.at("stages") + 2;
    return TmaWsGemmSharedBytes(p, deeper) > target.max_shared_bytes;
  });
  space.Require("raster groups no taller than the row tiles", [p](const Variant& v) {
    return v.at("group_m") == 1 || v.at("group_m") <= CeilDiv(p.m, v.at("block_m"));
  });
  // Two blocks multicast their halves of one B tile (gemm_sm90a_tma_ws.h).
  // On an H100 clusters ran 0.94-1.03x the same tiles alone (the shapes of
  // bench/results/2026-12-07-h100-cluster-multicast-cta-scope.md): only
  // at the deepest pipeline, which every cluster winner had: 11-12 more
  // variants a bf16 prefill key (on 23-25), not 19-21.
  space.Require(
      "cluster_m 2 only with B K-major, cooperative consumers, two row tiles or more and the "
      "deepest pipeline that fits",
      [p, target](const Variant& v) {
        if (v.at("cluster_m") == 1) return true;
        return p.b_col_major && !v.at("pingpong") && p.m > v.at("block_m") &&
               AtTheDeepestPipeline(p, target, v);
      });
  // A ping-pong consumer holds a whole tile; at group_m 1 ptxas (capped at
  // 168 registers for 384 threads) spilled 8 bytes of its bias + gelu_tanh
  // epilogue, in raster groups it did not (sm_90a, CUDA 13).
  space.Require("ping-pong in raster groups (group_m > 1)",
                [](const Variant& v) { return v.at("pingpong") == 0 || v.at("group_m") > 1; });
  // Timed first: where the H100 winners of the 8 prefill shapes were; these
  // 4 variants came within 2% of the fastest in 12 of 14 exhaustive runs
  // (bench/results/2026-12-07-h100-prefer-replay.md).
  for (const int64_t group : {16, 8}) {
    space.Prefer("128x256 tiles alone, cooperative, in raster groups of " + std::to_string(group) +
                     ", at the deepest pipeline",
                 [p, target, group](const Variant& v) {
                   return v.at("block_m") == 128 && v.at("block_n") == 256 &&
                          v.at("group_m") == group && !v.at("pingpong") && v.at("cluster_m") == 1 &&
                          AtTheDeepestPipeline(p, target, v);
                 });
  }
  return space;
}

SearchSpace TmaDecodeGemmSpace(const GemmProblem& p, const GemmTarget& target) {
  SearchSpace space;
  space.Add("block_w", {64, 128})
      .Add("m_pad", {DecodeRows(p.m)})
      .Add("k_boxes", {1, 2, 4})
      .Add("stages", {2, 3, 4, 6, 8})
      .Add("split_k", {1, 2, 4});
  space.Require("the target has TMA and warpgroup MMA (sm_90a)",
                [target](const Variant&) { return target.warpgroup_mma; });
  space.Require("stages x k_boxes copies in flight: " + std::to_string(kMinBoxesInFlight) + " to " +
                    std::to_string(kMaxBoxesInFlight),
                [](const Variant& v) {
                  const int64_t boxes = v.at("stages") * v.at("k_boxes");
                  return boxes >= kMinBoxesInFlight && boxes <= kMaxBoxesInFlight;
                });
  space.Require("split_k > 1 only while tiles x split_k fill at most 2 waves of " +
                    std::to_string(target.multiprocessors) + " SMs, each split 2+ stages of k",
                [p, target](const Variant& v) {
                  const int64_t split = v.at("split_k");
                  const int64_t tiles = CeilDiv(p.n, TmaOutColumns(p, v.at("block_w"))) * p.batch;
                  const int64_t stage_k = kBoxKBytes / p.element_bytes * v.at("k_boxes");
                  return split == 1 || (tiles * split <= 2 * target.multiprocessors &&
                                        CeilDiv(p.k, stage_k) >= 2 * split);
                });
  space.Require("shared memory per block <= " + std::to_string(target.max_shared_bytes),
                [target](const Variant& v) {
                  return TmaDecodeGemmSharedBytes(v) <= target.max_shared_bytes;
                });
  return space;
}

SearchSpace MmaDecodeGemmSpace(const GemmProblem& p, const GemmTarget& target) {
  SearchSpace space;
  space.Add("m_tiles", {DecodeRows(p.m) / 16})
      .Add("warp_rows", {1, 2, 4})
      .Add("warps_n", {1, 2, 4})
      .Add("warps_k", {4, 8, 16})
      .Add("unroll", {4, 8});
  space.Require("an NVIDIA target (mma.sync)",
                [target](const Variant&) { return target.vendor.backend == gpu::kCuda.backend; });
  space.Require("128 to 512 threads a block", [](const Variant& v) {
    const int64_t threads = v.at("warps_n") * v.at("warps_k") * 32;
    return threads >= 128 && threads <= 512;
  });
  space.Require("at most " + std::to_string(kMaxLanesLoads) +
                    " 16-byte weight loads a lane in flight (warp_rows x unroll x m_tiles)",
                [](const Variant& v) {
                  return v.at("warp_rows") * v.at("unroll") * v.at("m_tiles") <= kMaxLanesLoads;
                });
  space.Require("every k slice has a chunk to load",
                [p](const Variant& v) { return CeilDiv(p.k, kDecodeChunkK) >= v.at("warps_k"); });
  space.Require("shared memory per block <= " + std::to_string(target.max_shared_bytes),
                [target](const Variant& v) {
                  return MmaDecodeGemmSharedBytes(v) <= target.max_shared_bytes;
                });
  return space;
}

}  // namespace tiletune::kernels::gemm
