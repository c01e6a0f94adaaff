#include "kernels/ops/gemm/tile_gemm_space.h"

#include <algorithm>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_op.h"

namespace tiletune::kernels::gemm {
namespace {

constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kVectorBytes = 16;  // the widest global load (cp.async)
// Float (tf32) warp tiles: each float fragment takes twice the registers
// of a 16-bit one, and ptxas (CUDA 13, sm_90) spills at 32x64 or 64x32 in
// 128x128 tiles; 32x32 (1024 elements) stays under 255 registers.
constexpr int64_t kMaxTf32WarpTile = 1024;
// A gated key keeps the gate's accumulators through the up product's main
// loop: two tiles in the 128 registers a lane that one 64x64 tile takes.
constexpr int64_t kMaxGatedWarpTile = 2048;
// Raster groups of this many row tiles, when there are enough to group.
constexpr int64_t kGroupM = 8;
// Pipeline depths; the mma.sync / MFMA main loop's deepest.
constexpr int64_t kStages[] = {2, 3, 4, 6, 8};
constexpr int64_t kMaxSyncStages = 4;
// wgmma: rows per warpgroup, warps per warpgroup, the k tile (one 128-byte
// swizzled row of 16-bit elements), the alignment slack for the first
// swizzle atom (ops/gemm/device/gemm_sm90a_wgmma.h).
constexpr int64_t kWarpgroupRows = 64;
constexpr int64_t kWarpgroupWarps = 4;
constexpr int64_t kWgmmaBlockK = 64;
constexpr int64_t kSwizzleAtomBytes = 1024;
// A block's register file, and what a wgmma thread holds besides its
// block_n / 2 accumulators (addresses, loop state, the epilogue's values):
// an estimate that keeps ptxas from spilling, checked by its report.
constexpr int64_t kRegistersPerBlock = 65536;
constexpr int64_t kWgmmaOtherRegisters = 40;
// Split-K over a cluster: at most the portable cluster size, each block
// with at least this many k tiles; partial tiles pad rows by 4 floats.
constexpr int64_t kSplitK[] = {1, 2, 4, 8};
constexpr int64_t kMinKTilesPerSplit = 4;
constexpr int64_t kPartialRowPad = 4;
// What a CDNA lane holds beyond MfmaLaneRegisters: addresses, loop state.
constexpr int64_t kMfmaOtherRegisters = 87;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t Warps(const Variant& v) {
  return v.at("warps_m") * v.at("warps_n") * v.at("warps_k");
}

bool SmallTile(const Variant& v) {
  return v.at("block_m") <= 32;
}

int64_t KTiles(const GemmProblem& p, const Variant& v) {
  return CeilDiv(p.k, v.at("block_k"));
}

int64_t MaxStages(const GemmTarget& target) {
  return target.async_copies ? kMaxSyncStages : 2;
}

bool Wgmma(const Variant& v) {
  return v.at("mma") == kMmaWarpgroup;
}

// Registers a lane of the CDNA leaf's main loop holds: the f32
// accumulators of its warp tile, two k tiles of operand fragments (LLVM
// reads a whole tile's ahead of its MFMAs) and the copies it stages through
// registers. With kMfmaOtherRegisters, calibrated on clang 22's gfx950 code
// objects: 64x64 warp tiles on 8 waves (256 registers) spilled, 32x64 ones
// took at most 170; the compile test checks every shipped target.
int64_t MfmaLaneRegisters(const GemmProblem& p, const GemmTarget& target, const Variant& v) {
  const int64_t lanes = target.vendor.warp_size, bk = v.at("block_k");
  const int64_t tm = v.at("block_m") / v.at("warps_m"), tn = v.at("block_n") / v.at("warps_n");
  const int64_t accumulators = (p.gated ? 2 : 1) * tm * tn / lanes;
  const int64_t operands = 2 * (tm + tn) * bk * p.element_bytes / (4 * lanes);
  const int64_t staged =
      (v.at("block_m") + v.at("block_n")) * bk * p.element_bytes / (4 * Warps(v) * lanes);
  return accumulators + operands + staged;
}

bool FitsSharedMemory(const GemmProblem& p, const GemmTarget& target, const Variant& v) {
  return TileGemmLaunchOf(p, target, v).shared_bytes <= target.max_shared_bytes;
}

// wgmma variants (gemm_sm90a_wgmma.h): the layouts and tiles it reads, its
// warp roles, registers and pipeline depth.
void AddWgmmaRules(SearchSpace& space, const GemmProblem& p, const GemmTarget& target) {
  auto rule = [&space](std::string description, std::function<bool(const Variant&)> holds) {
    space.Require("mma=wgmma: " + std::move(description),
                  [holds](const Variant& v) { return !Wgmma(v) || holds(v); });
  };
  rule("the target has warpgroup MMA (sm_90a)",
       [target](const Variant&) { return target.warpgroup_mma; });
  rule("16-bit operands (tf32 runs mma.sync)",
       [p](const Variant&) { return p.element_bytes == 2; });
  rule("no gate (a gated key runs mma.sync here, tma_ws_gemm on prefill)",
       [p](const Variant&) { return !p.gated; });
  rule("A row-major and B column-major (K-major operands)",
       [p](const Variant&) { return !p.a_col_major && p.b_col_major; });
  rule("warps_m = block_m / 64 warpgroups of warps_n = 4 warps, warps_k = 1", [](const Variant& v) {
    return v.at("block_m") % kWarpgroupRows == 0 &&
           v.at("warps_m") == v.at("block_m") / kWarpgroupRows &&
           v.at("warps_n") == kWarpgroupWarps && v.at("warps_k") == 1;
  });
  rule("block_k = 64 (one 128-byte swizzled row)",
       [](const Variant& v) { return v.at("block_k") == kWgmmaBlockK; });
  rule("block_n (the wgmma N) is 64, 128 or 256", [](const Variant& v) {
    const int64_t bn = v.at("block_n");
    return bn == 64 || bn == 128 || bn == 256;
  });
  rule("registers: block_n / 2 accumulators + " + std::to_string(kWgmmaOtherRegisters) +
           " a thread fit " + std::to_string(kRegistersPerBlock) + " per block",
       [target](const Variant& v) {
         return Warps(v) * target.vendor.warp_size * (v.at("block_n") / 2 + kWgmmaOtherRegisters) <=
                kRegistersPerBlock;
       });
  rule("3+ stages, no more than k tiles + 2",
       [p](const Variant& v) { return v.at("stages") >= 3 && v.at("stages") <= KTiles(p, v) + 2; });
  // Split-K pays only while the tiles leave SMs idle, and each split needs
  // enough k tiles to fill its pipeline; of the splits that qualify, the
  // largest (the fewest idle SMs) is the one worth trying.
  auto splits_ok = [p, target](const Variant& v, int64_t split_k) {
    const int64_t tiles = CeilDiv(p.m, v.at("block_m")) * CeilDiv(p.n, v.at("block_n")) * p.batch;
    return split_k == 1 || (tiles * split_k <= target.multiprocessors &&
                            KTiles(p, v) >= split_k * kMinKTilesPerSplit);
  };
  rule("split_k > 1 only while tiles x split_k fill at most " +
           std::to_string(target.multiprocessors) + " SMs, with " +
           std::to_string(kMinKTilesPerSplit) + "+ k tiles a split",
       [splits_ok](const Variant& v) { return splits_ok(v, v.at("split_k")); });
  rule("split_k is 1 or the largest that qualifies", [splits_ok](const Variant& v) {
    const int64_t split_k = v.at("split_k");
    return split_k == 1 || split_k == kSplitK[std::size(kSplitK) - 1] || !splits_ok(v, 2 * split_k);
  });
  rule("one of the two deepest pipelines that fit shared memory", [p, target](const Variant& v) {
    if (!FitsSharedMemory(p, target, v)) return true;  // the shared-memory rule says why
    int deeper = 0;
    for (const int64_t stages : kStages) {
      Variant d = v;
      d["stages"] = stages;
      deeper +=
          stages > v.at("stages") && stages <= KTiles(p, v) + 2 && FitsSharedMemory(p, target, d);
    }
    return deeper <= 1;
  });
}

}  // namespace

GemmTarget GemmTargetOn(const GemmTarget& leaf, const DeviceDescription& device) {
  GemmTarget target = leaf;
  target.max_shared_bytes = device.max_shared_bytes_per_block;
  target.warpgroup_mma = leaf.warpgroup_mma && device.has_sm90a;
  target.multiprocessors = device.compute_units;
  target.max_registers_per_lane = device.max_registers_per_lane;
  target.mma_k = device.mma_k;
  return target;
}

GemmProblem ProblemOf(const v1::KernelKey& raw) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  GemmProblem p;
  p.m = DimSize(key, "m").value_or(1);
  p.n = DimSize(key, "n").value_or(1);
  p.k = DimSize(key, "k").value_or(1);
  p.batch = DimSize(key, "batch").value_or(1);
  p.a_col_major = IsColMajor(key, "a");
  p.b_col_major = IsColMajor(key, "b");
  p.lda = p.a_col_major ? p.m : p.k;
  p.ldb = p.b_col_major ? p.k : p.n;
  p.ldc = p.n;
  p.element_bytes = key.input_dtype() == v1::DTYPE_F32 ? 4 : 2;
  p.out_element_bytes = key.output_dtype() == v1::DTYPE_F32 ? 4 : 2;
  p.gated = Gated(key);
  return p;
}

int64_t MmaTile(const Variant& v) {
  const auto it = v.find("mma_tile");
  return it == v.end() ? 16 : it->second;
}

int64_t VectorWidth(int64_t leading_dimension, int64_t element_bytes) {
  for (int64_t width = kVectorBytes / element_bytes; width > 1; width /= 2) {
    if (leading_dimension % width == 0) return width;
  }
  return 1;
}

TileGemmLaunch TileGemmLaunchOf(const GemmProblem& p, const GemmTarget& target, const Variant& v) {
  const int64_t bm = v.at("block_m"), bn = v.at("block_n"), bk = v.at("block_k");
  TileGemmLaunch launch;
  launch.threads = Warps(v) * target.vendor.warp_size;
  launch.blocks = CeilDiv(p.m, bm) * CeilDiv(p.n, bn) * v.at("split_k");
  launch.batch = p.batch;
  const int64_t pipeline = v.at("stages") * (bm * bk + bk * bn) * p.element_bytes;
  if (Wgmma(v)) {
    const int64_t partial =
        v.at("split_k") > 1 ? bm * (bn + kPartialRowPad) * int64_t{sizeof(float)} : 0;
    launch.shared_bytes = std::max(pipeline, partial) + kSwizzleAtomBytes;
    return launch;
  }
  const int64_t reduce = (v.at("warps_k") - 1) * bm * bn * int64_t{sizeof(float)};
  launch.shared_bytes = std::max(pipeline, reduce);
  return launch;
}

SearchSpace TileGemmSpace(const GemmProblem& p, const GemmTarget& target) {
  const int64_t m = p.m, n = p.n, k = p.k;
  // The smallest k tile: two MMA k steps (32; 64 on gfx950 and with 32x32
  // base tiles, which span k = 32).
  const int64_t min_block_k = 2 * target.mma_k;
  auto min_block_k_of = [target](const Variant& v) {
    return 2 * (MmaTile(v) == 32 ? int64_t{32} : target.mma_k);
  };
  auto k_rounded_of = [k, min_block_k_of](const Variant& v) {
    return CeilDiv(k, min_block_k_of(v)) * min_block_k_of(v);
  };
  const std::string k_step_text =
      std::to_string(min_block_k) + (target.mma_tile_32 ? " (64 with mma_tile 32)" : "");
  SearchSpace space;
  space.Add("block_m", {16, 32, 64, 128, 256})
      .Add("block_n", {32, 64, 128, 256})
      .Add("block_k", {32, 64, 128, 256})
      .Add("warps_m", {1, 2, 4})
      .Add("warps_n", {1, 2, 4})
      .Add("warps_k", {1, 2, 4})
      .Add("stages", {std::begin(kStages), std::end(kStages)})
      .Add("group_m", {1, kGroupM})
      .Add("mma", {kMmaSync, kMmaWarpgroup})
      .Add("split_k", {std::begin(kSplitK), std::end(kSplitK)});
  if (target.mma_tile_32) {
    space.Add("mma_tile", {16, 32});
    // 32x32 MFMAs read each operand element once per 32 products instead
    // of 16; a 32x32 tile's 16 accumulators a lane suit the compute-bound
    // regime's warp tiles, not the small tiles of decode.
    space.Require("mma_tile 32 only on tiles of 64+ rows with warp tiles of whole 32x32 base tiles",
                  [](const Variant& v) {
                    return MmaTile(v) == 16 ||
                           (!SmallTile(v) && v.at("block_m") / v.at("warps_m") % 32 == 0 &&
                            v.at("block_n") / v.at("warps_n") % 32 == 0);
                  });
  }
  // The rules of the mma.sync / MFMA main loop (gemm_mma_multistage.h); wgmma variants
  // have their own below.
  auto sync_rule = [&space](std::string description, std::function<bool(const Variant&)> holds) {
    space.Require(std::move(description),
                  [holds](const Variant& v) { return Wgmma(v) || holds(v); });
  };
  sync_rule("at most " + std::to_string(kMaxSyncStages) + " stages",
            [](const Variant& v) { return v.at("stages") <= kMaxSyncStages; });
  sync_rule("split_k = 1 (k splits over warps_k inside the block)",
            [](const Variant& v) { return v.at("split_k") == 1; });
  // First, so that the many points they reject stop early.
  AddWgmmaRules(space, p, target);

  // The warp tile: whole 16x16 base tiles, at most 64x64 fp32 accumulators
  // (128 registers a lane on NVIDIA).
  space.Require("warp tile rows (block_m / warps_m) are 16, 32 or 64", [](const Variant& v) {
    const int64_t bm = v.at("block_m"), wm = v.at("warps_m");
    return bm % wm == 0 && (bm / wm == 16 || bm / wm == 32 || bm / wm == 64);
  });
  sync_rule("warp tile columns (block_n / warps_n) are 32 or 64", [](const Variant& v) {
    const int64_t bn = v.at("block_n"), wn = v.at("warps_n");
    return bn % wn == 0 && (bn / wn == 32 || bn / wn == 64);
  });
  sync_rule("a gate holds two accumulator tiles: warp tiles of at most " +
                std::to_string(kMaxGatedWarpTile) + " elements",
            [p](const Variant& v) {
              return !p.gated ||
                     v.at("block_m") / v.at("warps_m") * v.at("block_n") / v.at("warps_n") <=
                         kMaxGatedWarpTile;
            });
  sync_rule("tf32: warp tiles of at most " + std::to_string(kMaxTf32WarpTile) + " elements",
            [p](const Variant& v) {
              return p.element_bytes == 2 ||
                     v.at("block_m") / v.at("warps_m") * v.at("block_n") / v.at("warps_n") <=
                         kMaxTf32WarpTile;
            });
  sync_rule("4 or 8 warps; 1 or 2 only when k <= 64, with warp tiles of <= 2048 elements",
            [k](const Variant& v) {
              const int64_t w = Warps(v);
              const int64_t tile =
                  v.at("block_m") / v.at("warps_m") * v.at("block_n") / v.at("warps_n");
              return w == 4 || w == 8 || (k <= 64 && (w == 1 || w == 2) && tile <= 2048);
            });
  space.Require(
      "at most " + std::to_string(kMaxThreads) + " threads per block",
      [target](const Variant& v) { return Warps(v) * target.vendor.warp_size <= kMaxThreads; });
  // gemm_mma_multistage.h asserts it: its fragment buffers alternate.
  space.Require("each k group of warps takes 2 or 4 MMA k steps a stage (block_k / warps_k is " +
                    std::to_string(min_block_k) + " or " + std::to_string(2 * min_block_k) +
                    (target.mma_tile_32 ? "; 64 or 128 with mma_tile 32" : "") + ")",
                [min_block_k_of](const Variant& v) {
                  const int64_t bk = v.at("block_k"), wk = v.at("warps_k");
                  const int64_t least = min_block_k_of(v);
                  return bk % wk == 0 && (bk / wk == least || bk / wk == 2 * least);
                });
  sync_rule("block_k <= k rounded up to " + k_step_text,
            [k_rounded_of](const Variant& v) { return v.at("block_k") <= k_rounded_of(v); });
  sync_rule("no more stages than k tiles + 1",
            [p](const Variant& v) { return v.at("stages") <= KTiles(p, v) + 1; });

  // Small-M regime: one row tile holds all of m (each extra row tile would
  // read B again), k split over warps for bandwidth, the deepest pipeline.
  space.Require("tiles of 16 or 32 rows are the smallest that hold all of m",
                [m](const Variant& v) {
                  const int64_t bm = v.at("block_m");
                  return !SmallTile(v) || (bm >= m && (bm == 16 || bm / 2 < m));
                });
  space.Require(
      "tiles of 16 or 32 rows use the deepest pipeline k allows", [p, target](const Variant& v) {
        return !SmallTile(v) || v.at("stages") == std::min(MaxStages(target), KTiles(p, v) + 1);
      });
  space.Require("tiles of 16 or 32 rows have one warp row (warps_m = 1)",
                [](const Variant& v) { return !SmallTile(v) || v.at("warps_m") == 1; });

  // Compute-bound regime: tiles of 64+ rows, warp tiles of at least 32x64,
  // 128 to 256 of k in flight.
  space.Require(
      "tiles of 64+ rows only for m > 32, at most the first that holds m",
      [m](const Variant& v) { return SmallTile(v) || (m > 32 && v.at("block_m") / 2 < m); });
  space.Require("tiles of 64+ rows do not split k over warps (warps_k = 1)",
                [](const Variant& v) { return SmallTile(v) || v.at("warps_k") == 1; });
  sync_rule("tiles of 64+ rows have warp tiles of 2048+ elements (tf32: the largest), 32+ rows",
            [p](const Variant& v) {
              const int64_t tm = v.at("block_m") / v.at("warps_m");
              const int64_t tn = v.at("block_n") / v.at("warps_n");
              const int64_t least = p.element_bytes == 4 ? kMaxTf32WarpTile : 2048;
              return SmallTile(v) || (tm >= 32 && tm * tn >= least);
            });
  space.Require("tiles of 64+ rows are 64+ columns wide",
                [](const Variant& v) { return SmallTile(v) || v.at("block_n") >= 64; });
  sync_rule(
      "tiles of 64+ rows stage block_k <= 64, block_k * stages from 128 (or 2 k "
      "tiles) to 256",
      [k_rounded_of](const Variant& v) {
        const int64_t depth = v.at("block_k") * v.at("stages");
        return SmallTile(v) ||
               (v.at("block_k") <= 64 && depth >= std::min<int64_t>(128, 2 * k_rounded_of(v)) &&
                depth <= 256);
      });
  if (target.async_copies) {
    space.Require(
        "tiles of 64+ rows keep two k tiles in flight (stages >= 3) when k has more "
        "than 2 tiles",
        [p](const Variant& v) { return SmallTile(v) || v.at("stages") >= 3 || KTiles(p, v) <= 2; });
  }
  // tf32: 8 warps of 32x32 make at most 128x64 or 64x128.
  space.Require(
      "tiles of 128+ rows and columns (tf32: 128x64 or 64x128+) when m and n are both "
      ">= 512",
      [m, n, p](const Variant& v) {
        const int64_t bm = v.at("block_m"), bn = v.at("block_n");
        return m < 512 || n < 512 || (bm >= 128 && bn >= 128) ||
               (p.element_bytes == 4 && bm >= 64 && bn >= 64 && bm * bn >= 128 * 64);
      });
  space.Require("block_n is the narrowest of its regime or less than 2 n", [n](const Variant& v) {
    const int64_t bn = v.at("block_n");
    return bn == (SmallTile(v) ? 32 : 64) || bn / 2 < n;
  });

  if (!target.async_copies) {
    space.Require("2 stages: copies complete before compute on this target",
                  [](const Variant& v) { return v.at("stages") == 2; });
    sync_rule("registers: accumulators, two k tiles of operands, the staged copies and " +
                  std::to_string(kMfmaOtherRegisters) + " more fit what a lane of the block gets",
              [p, target](const Variant& v) {
                return MfmaLaneRegisters(p, target, v) + kMfmaOtherRegisters <=
                       RegistersPerLane(target.max_registers_per_lane, target.vendor.warp_size,
                                        Warps(v) * target.vendor.warp_size);
              });
  }
  space.Require("shared memory per block <= " + std::to_string(target.max_shared_bytes) + " bytes",
                [p, target](const Variant& v) { return FitsSharedMemory(p, target, v); });
  space.Require("raster groups (group_m = 8) only with 16+ row tiles and 8+ column tiles",
                [m, n](const Variant& v) {
                  return v.at("group_m") == 1 || (CeilDiv(m, v.at("block_m")) >= 2 * kGroupM &&
                                                  CeilDiv(n, v.at("block_n")) >= kGroupM);
                });
  return space;
}

}  // namespace tiletune::kernels::gemm
