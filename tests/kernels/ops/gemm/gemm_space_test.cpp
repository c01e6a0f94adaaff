// The tile GEMM's search spaces and launch geometry, without compiling.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kernels/ops/gemm/tile_gemm_space.h"
#include "kernels/ops/gemm/tma_and_decode_gemm_space.h"

namespace tiletune::kernels::gemm {
namespace {

GemmProblem Problem(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.lda = k;
  p.ldb = n;
  p.ldc = n;
  return p;
}

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// gfx950's leaf steps k by 32 (16x16x32 MFMAs): its spaces differ.
const GemmTarget kTargets[] = {kSm90Target, kGfx90aTarget,
                               GemmTargetOn(kGfx90aTarget, kernels::kMi355x)};

TEST(TileGemmSpace, StandardShapesHaveOneToSixtyVariants) {
  const int64_t shapes[][3] = {{4096, 4096, 4096}, {4096, 14336, 4096}, {4096, 4096, 14336},
                               {4096, 6144, 4096}, {8192, 8192, 8192},  {16, 4096, 4096},
                               {16, 14336, 4096},  {16, 4096, 14336},   {128, 4096, 4096},
                               {128, 14336, 4096}};
  for (const auto& target : kTargets) {
    for (const auto& s : shapes) {
      const size_t count = TileGemmSpace(Problem(s[0], s[1], s[2]), target).ValidVariants().size();
      EXPECT_GE(count, 1u) << target.vendor.backend << " " << s[0] << "x" << s[1] << "x" << s[2];
      EXPECT_LE(count, 60u) << target.vendor.backend << " " << s[0] << "x" << s[1] << "x" << s[2];
    }
  }
}

TEST(TileGemmSpace, EveryVariantFitsItsTarget) {
  const GemmProblem problems[] = {Problem(4096, 4096, 4096), Problem(37, 53, 29),
                                  Problem(16, 14336, 4096),  Problem(300, 200, 136, 3),
                                  Problem(1, 1, 1),          Problem(640, 768, 520)};
  for (const auto& target : kTargets) {
    for (const auto& p : problems) {
      const auto variants = TileGemmSpace(p, target).ValidVariants();
      ASSERT_FALSE(variants.empty()) << p.m << "x" << p.n << "x" << p.k;
      for (const Variant& v : variants) {
        const TileGemmLaunch launch = TileGemmLaunchOf(p, target, v);
        const int64_t warps = v.at("warps_m") * v.at("warps_n") * v.at("warps_k");
        EXPECT_EQ(launch.threads, warps * target.vendor.warp_size) << VariantString(v);
        EXPECT_LE(launch.threads, 1024) << VariantString(v);
        EXPECT_LE(launch.shared_bytes, target.max_shared_bytes) << VariantString(v);
        // Warp tiles are whole 16x16 mma tiles; k groups take an even number
        // of MMA k steps (the fragment buffers alternate).
        EXPECT_EQ(v.at("block_m") % (16 * v.at("warps_m")), 0) << VariantString(v);
        EXPECT_EQ(v.at("block_n") % (16 * v.at("warps_n")), 0) << VariantString(v);
        EXPECT_EQ(v.at("block_k") % (2 * target.mma_k * v.at("warps_k")), 0) << VariantString(v);
        EXPECT_GE(v.at("stages"), 2) << VariantString(v);
      }
    }
  }
}

TEST(TileGemmSpace, OddShapeTilesCoverItOnce) {
  const GemmProblem p = Problem(37, 53, 29, 3);
  const auto variants = TileGemmSpace(p, kSm90Target).ValidVariants();
  ASSERT_FALSE(variants.empty());
  for (const Variant& v : variants) {
    const TileGemmLaunch launch = TileGemmLaunchOf(p, kSm90Target, v);
    // One k tile (k rounds up to 32), so two stages; tiles up to the first
    // that holds m and n.
    EXPECT_EQ(v.at("block_k"), 32) << VariantString(v);
    EXPECT_EQ(v.at("stages"), 2) << VariantString(v);
    EXPECT_EQ(v.at("block_m"), 64) << VariantString(v);
    EXPECT_EQ(v.at("block_n"), 64) << VariantString(v);
    EXPECT_EQ(launch.blocks, 1) << VariantString(v);
    EXPECT_EQ(launch.batch, 3) << VariantString(v);
    EXPECT_EQ(launch.shared_bytes, 2 * (64 * 32 + 32 * 64) * 2) << VariantString(v);
  }
}

TEST(TileGemmSpace, DecodeShapeSplitsKOverWarps) {
  const GemmProblem p = Problem(16, 14336, 4096);
  bool splits_k = false;
  for (const Variant& v : TileGemmSpace(p, kSm90Target).ValidVariants()) {
    const TileGemmLaunch launch = TileGemmLaunchOf(p, kSm90Target, v);
    EXPECT_EQ(v.at("block_m"), 16) << VariantString(v);
    EXPECT_EQ(v.at("stages"), 4) << VariantString(v);
    EXPECT_EQ(launch.blocks, CeilDiv(14336, v.at("block_n"))) << VariantString(v);
    const int64_t pipeline = 4 * (16 + v.at("block_n")) * v.at("block_k") * 2;
    const int64_t reduce = (v.at("warps_k") - 1) * 16 * v.at("block_n") * 4;
    EXPECT_EQ(launch.shared_bytes, std::max(pipeline, reduce)) << VariantString(v);
    splits_k |= v.at("warps_k") > 1;
  }
  EXPECT_TRUE(splits_k);
}

TEST(TileGemmSpace, GroupsRasterOnlyWithManyTiles) {
  bool grouped = false;
  for (const Variant& v : TileGemmSpace(Problem(4096, 4096, 4096), kSm90Target).ValidVariants()) {
    grouped |= v.at("group_m") == 8;
  }
  EXPECT_TRUE(grouped);
  for (const Variant& v : TileGemmSpace(Problem(128, 4096, 4096), kSm90Target).ValidVariants()) {
    EXPECT_EQ(v.at("group_m"), 1) << VariantString(v);
  }
}

TEST(TileGemmSpace, NamesTheConstraintAVariantBreaks) {
  const SearchSpace nv = TileGemmSpace(Problem(4096, 4096, 4096), kSm90Target);
  Variant v = {{"block_m", 128},  {"block_n", 256}, {"block_k", 64}, {"warps_m", 2},
               {"warps_n", 4},    {"warps_k", 1},   {"stages", 4},   {"group_m", 1},
               {"mma", kMmaSync}, {"split_k", 1}};
  EXPECT_EQ(nv.Violation(v), std::nullopt);
  v["warps_n"] = 2;
  EXPECT_EQ(nv.Violation(v), "warp tile columns (block_n / warps_n) are 32 or 64");
  v["warps_n"] = 4;
  v["warps_k"] = 2;
  EXPECT_EQ(nv.Violation(v),
            "4 or 8 warps; 1 or 2 only when k <= 64, with warp tiles of <= "
            "2048 elements");

  // On gfx90a, 8 waves of 64x64 warp tiles need more registers than the
  // 256 a lane of 8 waves gets; copies there complete before compute.
  const SearchSpace amd = TileGemmSpace(Problem(4096, 4096, 4096), kGfx90aTarget);
  v["warps_k"] = 1;
  v["stages"] = 2;
  EXPECT_EQ(amd.Violation(v),
            "registers: accumulators, two k tiles of operands, the staged copies and 87 more fit "
            "what a lane of the block gets");
  v["stages"] = 3;
  EXPECT_EQ(amd.Violation(v), "2 stages: copies complete before compute on this target");
  // On 4 waves (512 registers a lane) a 64x256 tile fits them, not the 80
  // KiB of LDS its two stages take.
  v = {{"block_m", 64}, {"block_n", 256}, {"block_k", 64}, {"warps_m", 1},    {"warps_n", 4},
       {"warps_k", 1},  {"stages", 2},    {"group_m", 1},  {"mma", kMmaSync}, {"split_k", 1}};
  EXPECT_EQ(TileGemmSpace(Problem(256, 4096, 4096), kGfx90aTarget).Violation(v),
            "shared memory per block <= 65536 bytes");
}

GemmProblem KMajor(int64_t m, int64_t n, int64_t k) {
  GemmProblem p = Problem(m, n, k);
  p.b_col_major = true;
  p.ldb = k;
  return p;
}

int64_t WgmmaCount(const GemmProblem& p, const GemmTarget& target) {
  const auto variants = TileGemmSpace(p, target).ValidVariants();
  return std::ranges::count_if(variants, [](const Variant& v) { return v.at("mma") == 1; });
}

TEST(TileGemmSpace, WgmmaOnlyOnSm90aForKMajorOperandsAndMOver32) {
  EXPECT_GT(WgmmaCount(KMajor(4096, 4096, 4096), kSm90Target), 0);
  EXPECT_EQ(WgmmaCount(KMajor(4096, 4096, 4096), kGfx90aTarget), 0);
  EXPECT_EQ(WgmmaCount(Problem(4096, 4096, 4096), kSm90Target), 0);  // B row-major
  EXPECT_EQ(WgmmaCount(KMajor(16, 4096, 4096), kSm90Target), 0);
}

TEST(TileGemmSpace, WgmmaVariantsAreWarpgroupsOfDeepPipelines) {
  bool rows64 = false, splits = false;
  for (const GemmProblem& p : {KMajor(4096, 4096, 4096), KMajor(128, 14336, 4096),
                               KMajor(77, 129, 65), KMajor(4096, 4096, 14336)}) {
    for (const Variant& v : TileGemmSpace(p, kSm90Target).ValidVariants()) {
      if (v.at("mma") != kMmaWarpgroup) continue;
      const TileGemmLaunch launch = TileGemmLaunchOf(p, kSm90Target, v);
      const int64_t bm = v.at("block_m"), bn = v.at("block_n");
      EXPECT_EQ(v.at("block_k"), 64) << VariantString(v);
      EXPECT_EQ(launch.threads, bm / 64 * 128) << VariantString(v);
      EXPECT_GE(v.at("stages"), 3) << VariantString(v);
      const int64_t split_k = v.at("split_k");
      const int64_t tiles = CeilDiv(p.m, bm) * CeilDiv(p.n, bn);
      EXPECT_EQ(launch.blocks, tiles * split_k) << VariantString(v);
      const int64_t partial = split_k > 1 ? bm * (bn + 4) * 4 : 0;
      EXPECT_EQ(launch.shared_bytes, std::max(v.at("stages") * (bm + bn) * 64 * 2, partial) + 1024)
          << VariantString(v);
      // Split-K only where the tiles leave SMs idle.
      if (split_k > 1) {
        EXPECT_LE(tiles * split_k, kSm90Target.multiprocessors) << VariantString(v);
        splits = true;
      }
      EXPECT_LE(launch.shared_bytes, kSm90Target.max_shared_bytes) << VariantString(v);
      // 256 x 256 would need 128 accumulators in each of 512 threads.
      EXPECT_FALSE(bm == 256 && bn == 256) << VariantString(v);
      // Of the depths 3, 4, 6, 8: the one two steps deeper does not fit
      // (or exceeds k tiles + 2).
      Variant deeper = v;
      deeper["stages"] = v.at("stages") == 3 ? 6 : 8;
      if (v.at("stages") <= 4 && deeper.at("stages") <= CeilDiv(p.k, 64) + 2) {
        EXPECT_GT(TileGemmLaunchOf(p, kSm90Target, deeper).shared_bytes,
                  kSm90Target.max_shared_bytes)
            << VariantString(v);
      }
      rows64 |= bm == 64;
    }
  }
  EXPECT_TRUE(rows64);  // small m keeps enough blocks for the SMs
  EXPECT_TRUE(splits);  // 128 x 14336 x 4096 in 128 x 256 tiles: 56 tiles
}

// tma_ws_gemm's consumers split each tile's rows, or with ping-pong take
// whole tiles in turn: each then holds (and stages) a whole tile, so only
// tiles of 128 x 128 accumulators a warpgroup fit.
TEST(TmaWsGemmSpace, PingPongConsumersHoldAndStageWholeTiles) {
  int pingpong = 0, split = 0;
  for (const GemmProblem& p : {KMajor(4096, 4096, 4096), KMajor(2048, 14336, 4096)}) {
    for (const Variant& v : TmaWsGemmSpace(p, kSm90Target).ValidVariants()) {
      const int64_t bm = v.at("block_m"), bn = v.at("block_n");
      const int64_t rows = v.at("pingpong") ? bm : bm / 2;
      EXPECT_EQ(TmaWsConsumerRows(v), rows) << VariantString(v);
      EXPECT_LE(rows * bn / 128, 128) << VariantString(v);
      const int64_t staged_bytes = v.at("store_ring") ? 2 * 128 : bn * 2;
      EXPECT_EQ(
          TmaWsGemmSharedBytes(p, v),
          v.at("stages") * (bm + bn) * 128 + 2 * rows * staged_bytes + 16 * v.at("stages") + 1024)
          << VariantString(v);
      EXPECT_LE(TmaWsGemmSharedBytes(p, v), kSm90Target.max_shared_bytes) << VariantString(v);
      if (v.at("pingpong")) {
        EXPECT_GT(v.at("group_m"), 1) << VariantString(v);
      }
      ++(v.at("pingpong") ? pingpong : split);
    }
  }
  EXPECT_GT(pingpong, 0);
  EXPECT_GT(split, 0);
}

// A ring of two staging boxes a consumer only where staging the whole tile
// costs a pipeline stage: 128 x 256 bf16 tiles stage 64 KiB whole (3
// stages fit) or 32 KiB as a ring (4 fit); f32 C doubles the whole tile
// (2 stages) but not the ring; 128 x 128 tiles stage just two boxes.
TEST(TmaWsGemmSpace, StoreRingOnlyWhereItBuysAStage) {
  auto stages_of = [](const GemmProblem& p, int64_t bm, int64_t bn, int64_t ring) {
    std::set<int64_t> stages;
    for (const Variant& v : TmaWsGemmSpace(p, kSm90Target).ValidVariants()) {
      if (v.at("block_m") == bm && v.at("block_n") == bn && v.at("store_ring") == ring &&
          v.at("pingpong") == 0) {
        stages.insert(v.at("stages"));
      }
    }
    return stages;
  };
  const GemmProblem bf16 = KMajor(4096, 4096, 4096);
  EXPECT_EQ(stages_of(bf16, 128, 256, 0), (std::set<int64_t>{2, 3}));
  EXPECT_EQ(stages_of(bf16, 128, 256, 1), (std::set<int64_t>{4}));
  EXPECT_EQ(stages_of(bf16, 128, 128, 1), (std::set<int64_t>{}));
  GemmProblem f32_out = bf16;
  f32_out.out_element_bytes = 4;
  EXPECT_EQ(stages_of(f32_out, 128, 256, 0), (std::set<int64_t>{2}));
  EXPECT_EQ(stages_of(f32_out, 128, 256, 1), (std::set<int64_t>{3, 4}));
  // Without TMA stores (C rows of 500 bytes) nothing is staged.
  GemmProblem odd = KMajor(300, 250, 136);
  for (const Variant& v : TmaWsGemmSpace(odd, kSm90Target).ValidVariants()) {
    EXPECT_EQ(v.at("store_ring"), 0) << VariantString(v);
  }
}

// Clusters of two blocks (B multicast) only where their blocks can split a
// K-major B tile and run in lockstep, with two row tiles to share it, and
// only at the deepest pipeline that fits.
TEST(TmaWsGemmSpace, ClustersOfTwoShareAKMajorBAtTheDeepestPipeline) {
  int clusters = 0;
  for (const GemmProblem& p : {KMajor(4096, 4096, 4096), KMajor(2048, 14336, 4096)}) {
    for (const Variant& v : TmaWsGemmSpace(p, kSm90Target).ValidVariants()) {
      if (v.at("cluster_m") == 1) continue;
      ++clusters;
      EXPECT_EQ(v.at("pingpong"), 0) << VariantString(v);
      Variant deeper = v;
      deeper["stages"] = v.at("stages") + 1;
      EXPECT_GT(TmaWsGemmSharedBytes(p, deeper), kSm90Target.max_shared_bytes) << VariantString(v);
    }
  }
  EXPECT_GT(clusters, 0);
  // B row-major (N-major panels), or one row tile: blocks alone.
  for (const GemmProblem& p : {Problem(4096, 4096, 4096), KMajor(128, 4096, 4096)}) {
    for (const Variant& v : TmaWsGemmSpace(p, kSm90Target).ValidVariants()) {
      EXPECT_EQ(v.at("cluster_m"), 1) << VariantString(v);
    }
  }
}

// A tuning run times first the 128x256 cooperative tiles at the deepest
// pipeline, in raster groups of 16, then of 8: where the H100 winners were.
TEST(TmaWsGemmSpace, PrefersDeepestPipeline128x256TilesInRasterGroups) {
  const GemmProblem p = KMajor(4096, 4096, 4096);
  const SearchSpace space = TmaWsGemmSpace(p, kSm90Target);
  std::map<size_t, int> per_rule;
  for (const Variant& v : space.ValidVariants()) {
    const auto rule = space.PreferenceOf(v);
    if (!rule) continue;
    ++per_rule[*rule];
    EXPECT_EQ(v.at("block_m"), 128) << VariantString(v);
    EXPECT_EQ(v.at("block_n"), 256) << VariantString(v);
    EXPECT_EQ(v.at("group_m"), *rule == 0 ? 16 : 8) << VariantString(v);
    EXPECT_EQ(v.at("cluster_m"), 1) << VariantString(v);
    Variant deeper = v;
    deeper["stages"] = v.at("stages") + 1;
    EXPECT_GT(TmaWsGemmSharedBytes(p, deeper), kSm90Target.max_shared_bytes) << VariantString(v);
  }
  // Staged whole (3 stages) and through the ring (4), each group size.
  EXPECT_EQ(per_rule, (std::map<size_t, int>{{0, 2}, {1, 2}}));
}

// f32 read as tf32: 4-byte elements in shared memory, float fragments that
// allow warp tiles of at most 1024 elements, mma.sync only.
// 32x32 MFMA base tiles (mma_tile 32) are a CDNA choice, on the
// compute-bound tiles only, each warp tile whole 32x32 tiles and a stage two
// or four of their k = 32 steps; NVIDIA spaces have no such parameter.
TEST(TileGemmSpace, MfmaTiles32x32OnlyOnCdnaComputeBoundTiles) {
  for (const Variant& v : TileGemmSpace(Problem(4096, 4096, 4096), kSm90Target).ValidVariants()) {
    EXPECT_FALSE(v.contains("mma_tile"));
  }
  for (const GemmTarget& target : {kGfx90aTarget, GemmTargetOn(kGfx90aTarget, kernels::kMi355x)}) {
    std::set<int64_t> tiles;
    for (const Variant& v : TileGemmSpace(Problem(4096, 4096, 4096), target).ValidVariants()) {
      tiles.insert(v.at("mma_tile"));
      if (v.at("mma_tile") != 32) continue;
      EXPECT_GE(v.at("block_m"), 64);
      EXPECT_EQ(v.at("block_m") / v.at("warps_m") % 32, 0);
      EXPECT_EQ(v.at("block_n") / v.at("warps_n") % 32, 0);
      const int64_t k_per_group = v.at("block_k") / v.at("warps_k");
      EXPECT_TRUE(k_per_group == 64 || k_per_group == 128) << k_per_group;
    }
    EXPECT_EQ(tiles, (std::set<int64_t>{16, 32}));
    for (const Variant& v : TileGemmSpace(Problem(16, 4096, 4096), target).ValidVariants()) {
      EXPECT_EQ(v.at("mma_tile"), 16) << "decode keeps 16x16 tiles";
    }
  }
  const Variant v = {{"block_m", 64},   {"block_n", 128}, {"block_k", 32}, {"warps_m", 2},
                     {"warps_n", 2},    {"warps_k", 1},   {"stages", 2},   {"group_m", 1},
                     {"mma", kMmaSync}, {"split_k", 1},   {"mma_tile", 32}};
  EXPECT_EQ(TileGemmSpace(Problem(4096, 4096, 4096), kGfx90aTarget).Violation(v),
            "each k group of warps takes 2 or 4 MMA k steps a stage (block_k / warps_k is 32 or "
            "64; 64 or 128 with mma_tile 32)");
}

TEST(TileGemmSpace, Tf32VariantsFitFloatTilesAndRunMmaSync) {
  const int64_t shapes[][4] = {{4096, 4096, 4096, 1}, {2048, 2048, 2048, 1}, {16, 4096, 4096, 1},
                               {128, 14336, 4096, 1}, {77, 129, 65, 2},      {1, 1, 1, 1}};
  for (const auto& s : shapes) {
    for (const bool b_col_major : {false, true}) {
      GemmProblem p = Problem(s[0], s[1], s[2], s[3]);
      p.element_bytes = 4;
      p.b_col_major = b_col_major;
      p.ldb = b_col_major ? p.k : p.n;
      const auto variants = TileGemmSpace(p, kSm90Target).ValidVariants();
      EXPECT_GE(variants.size(), 1u) << s[0] << "x" << s[1] << "x" << s[2];
      EXPECT_LE(variants.size(), 60u) << s[0] << "x" << s[1] << "x" << s[2];
      for (const Variant& v : variants) {
        EXPECT_EQ(v.at("mma"), kMmaSync) << VariantString(v);
        EXPECT_LE(v.at("block_m") / v.at("warps_m") * v.at("block_n") / v.at("warps_n"), 1024)
            << VariantString(v);
        const int64_t pipeline =
            v.at("stages") *
            (v.at("block_m") * v.at("block_k") + v.at("block_k") * v.at("block_n")) * 4;
        const TileGemmLaunch launch = TileGemmLaunchOf(p, kSm90Target, v);
        EXPECT_GE(launch.shared_bytes, pipeline) << VariantString(v);
        EXPECT_LE(launch.shared_bytes, kSm90Target.max_shared_bytes) << VariantString(v);
      }
    }
  }
}

TEST(TileGemmSpace, VectorWidthFollowsTheLeadingDimension) {
  EXPECT_EQ(VectorWidth(4096, 2), 8);
  EXPECT_EQ(VectorWidth(36, 2), 4);
  EXPECT_EQ(VectorWidth(30, 2), 2);
  EXPECT_EQ(VectorWidth(29, 2), 1);
  // Floats: 16 bytes are 4 of them.
  EXPECT_EQ(VectorWidth(4096, 4), 4);
  EXPECT_EQ(VectorWidth(30, 4), 2);
  EXPECT_EQ(VectorWidth(65, 4), 1);
}

}  // namespace
}  // namespace tiletune::kernels::gemm
