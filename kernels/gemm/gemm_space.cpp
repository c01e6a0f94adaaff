#include "gemm_space.h"

#include <algorithm>

#include "kernels/kernel_key.h"

namespace tiletune::kernels::gemm {
namespace {

constexpr int64_t kElementBytes = 2;  // bf16 and f16 operands
constexpr int64_t kMaxThreads = 1024;
// Raster groups of this many row tiles, when there are enough to group.
constexpr int64_t kGroupM = 8;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

bool IsColMajor(const v1::KernelKey& key, const std::string& tensor) {
  for (const auto& l : key.layouts()) {
    if (l.tensor() == tensor) return l.layout() == v1::LAYOUT_COL_MAJOR;
  }
  return false;
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
  return target.async_copies ? 4 : 2;
}

}  // namespace

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
  return p;
}

int64_t VectorWidth(int64_t leading_dimension) {
  for (int64_t width : {8, 4, 2}) {
    if (leading_dimension % width == 0) return width;
  }
  return 1;
}

TileGemmLaunch TileGemmLaunchOf(const GemmProblem& p, const GemmTarget& target, const Variant& v) {
  const int64_t bm = v.at("block_m"), bn = v.at("block_n"), bk = v.at("block_k");
  TileGemmLaunch launch;
  launch.threads = Warps(v) * target.vendor.warp_size;
  launch.blocks = CeilDiv(p.m, bm) * CeilDiv(p.n, bn);
  launch.batch = p.batch;
  const int64_t pipeline = v.at("stages") * (bm * bk + bk * bn) * kElementBytes;
  const int64_t reduce = (v.at("warps_k") - 1) * bm * bn * int64_t{sizeof(float)};
  launch.shared_bytes = std::max(pipeline, reduce);
  return launch;
}

SearchSpace TileGemmSpace(const GemmProblem& p, const GemmTarget& target) {
  const int64_t m = p.m, n = p.n, k = p.k;
  const int64_t k_rounded = CeilDiv(k, 32) * 32;
  SearchSpace space;
  space.Add("block_m", {16, 32, 64, 128, 256})
      .Add("block_n", {32, 64, 128, 256})
      .Add("block_k", {32, 64, 128, 256})
      .Add("warps_m", {1, 2, 4})
      .Add("warps_n", {1, 2, 4})
      .Add("warps_k", {1, 2, 4})
      .Add("stages", {2, 3, 4})
      .Add("group_m", {1, kGroupM});

  // The warp tile: whole 16x16 base tiles, at most 64x64 fp32 accumulators
  // (128 registers a lane on NVIDIA).
  space.Require("warp tile rows (block_m / warps_m) are 16, 32 or 64", [](const Variant& v) {
    const int64_t bm = v.at("block_m"), wm = v.at("warps_m");
    return bm % wm == 0 && (bm / wm == 16 || bm / wm == 32 || bm / wm == 64);
  });
  space.Require("warp tile columns (block_n / warps_n) are 32 or 64", [](const Variant& v) {
    const int64_t bn = v.at("block_n"), wn = v.at("warps_n");
    return bn % wn == 0 && (bn / wn == 32 || bn / wn == 64);
  });
  space.Require("4 or 8 warps; 1 or 2 only when k <= 64, with warp tiles of <= 2048 elements",
                [k](const Variant& v) {
                  const int64_t w = Warps(v);
                  const int64_t tile =
                      v.at("block_m") / v.at("warps_m") * v.at("block_n") / v.at("warps_n");
                  return w == 4 || w == 8 || (k <= 64 && (w == 1 || w == 2) && tile <= 2048);
                });
  space.Require(
      "at most " + std::to_string(kMaxThreads) + " threads per block",
      [target](const Variant& v) { return Warps(v) * target.vendor.warp_size <= kMaxThreads; });
  space.Require(
      "each k group of warps takes 2 or 4 k16 steps a stage (block_k / warps_k is "
      "32 or 64)",
      [](const Variant& v) {
        const int64_t bk = v.at("block_k"), wk = v.at("warps_k");
        return bk % wk == 0 && (bk / wk == 32 || bk / wk == 64);
      });
  space.Require("block_k <= k rounded up to 32",
                [k_rounded](const Variant& v) { return v.at("block_k") <= k_rounded; });
  space.Require("no more stages than k tiles + 1",
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
  space.Require("tiles of 64+ rows have warp tiles of 2048+ elements, 32+ rows",
                [](const Variant& v) {
                  const int64_t tm = v.at("block_m") / v.at("warps_m");
                  const int64_t tn = v.at("block_n") / v.at("warps_n");
                  return SmallTile(v) || (tm >= 32 && tm * tn >= 2048);
                });
  space.Require("tiles of 64+ rows are 64+ columns wide",
                [](const Variant& v) { return SmallTile(v) || v.at("block_n") >= 64; });
  space.Require(
      "tiles of 64+ rows stage block_k <= 64, block_k * stages from 128 (or 2 k "
      "tiles) to 256",
      [k_rounded](const Variant& v) {
        const int64_t depth = v.at("block_k") * v.at("stages");
        return SmallTile(v) || (v.at("block_k") <= 64 &&
                                depth >= std::min<int64_t>(128, 2 * k_rounded) && depth <= 256);
      });
  if (target.async_copies) {
    space.Require(
        "tiles of 64+ rows keep two k tiles in flight (stages >= 3) when k has more "
        "than 2 tiles",
        [p](const Variant& v) { return SmallTile(v) || v.at("stages") >= 3 || KTiles(p, v) <= 2; });
  }
  space.Require("tiles of 128+ rows and columns when m and n are both >= 512",
                [m, n](const Variant& v) {
                  return m < 512 || n < 512 || (v.at("block_m") >= 128 && v.at("block_n") >= 128);
                });
  space.Require("block_n is the narrowest of its regime or less than 2 n", [n](const Variant& v) {
    const int64_t bn = v.at("block_n");
    return bn == (SmallTile(v) ? 32 : 64) || bn / 2 < n;
  });

  if (!target.async_copies) {
    space.Require("2 stages: copies complete before compute on this target",
                  [](const Variant& v) { return v.at("stages") == 2; });
  }
  space.Require("shared memory per block <= " + std::to_string(target.max_shared_bytes) + " bytes",
                [p, target](const Variant& v) {
                  return TileGemmLaunchOf(p, target, v).shared_bytes <= target.max_shared_bytes;
                });
  space.Require("raster groups (group_m = 8) only with 16+ row tiles and 8+ column tiles",
                [m, n](const Variant& v) {
                  return v.at("group_m") == 1 || (CeilDiv(m, v.at("block_m")) >= 2 * kGroupM &&
                                                  CeilDiv(n, v.at("block_n")) >= kGroupM);
                });
  return space;
}

}  // namespace tiletune::kernels::gemm
