#pragma once

#include <cstdint>

#include "kernels/core/device_description.h"
#include "kernels/core/search_space.h"
#include "kernels/source/gpu_source.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels::gemm {

// What the tile GEMM templates need to know about a GPU target beyond its
// vendor: limits the search space must respect, and what its tile-library
// leaf does (kernels/tt/arch/*.h).
struct GemmTarget {
  gpu::GpuVendor vendor;
  int64_t max_shared_bytes;        // dynamic shared memory (LDS) one block may use
  int64_t store_run;               // consecutive output columns one lane stores at once (frag::run)
  bool async_copies;               // copies overlap compute, so deeper pipelines pay
  bool warpgroup_mma;              // the sm_90a leaf's wgmma (variants compile for sm_90a)
  int64_t multiprocessors;         // SMs (CUs): blocks of one wave at one block each
  int64_t max_registers_per_lane;  // what one lane may address (RegistersPerLane)
  int64_t mma_k = 16;              // the k of one MMA step (arch::mma_k)
  // The leaf also runs 32x32 base tiles (TT_MFMA_32: the CDNA leaf's 32x32
  // MFMAs), so spaces search the `mma_tile` parameter, 16 or 32.
  bool mma_tile_32 = false;
};

// The sm80 leaf's cp.async pipeline and the sm_90a leaf's wgmma, on the H200
// (kH200: 227 KiB of shared memory per block, 132 SMs).
inline constexpr GemmTarget kSm90Target{gpu::kCuda, 227 * 1024, 2, true, true, 132, 255};
// The CDNA leaf stages copies synchronously; on the MI200 (kMi200: 64 KiB of
// LDS, 110 CUs).
inline constexpr GemmTarget kGfx90aTarget{gpu::kHip, 64 * 1024, 4,  false, false,
                                          110,       512,       16, true};

// A target's leaf on a device: the device's shared memory and SM count, and
// wgmma only where the leaf has it and the device compiles sm_90a.
GemmTarget GemmTargetOn(const GemmTarget& leaf, const DeviceDescription& device);

// The `mma` parameter: which main loop a variant runs. kMmaSync is
// gemm_mma_multistage.h's (mma.sync on NVIDIA, MFMA on AMD), on every target;
// kMmaWarpgroup is gemm_sm90a_wgmma.h's wgmma, on targets with warpgroup_mma,
// for A row-major and B column-major (other layouts run kMmaSync). wgmma
// variants may also split k over the split_k blocks of a cluster.
inline constexpr int64_t kMmaSync = 0;
inline constexpr int64_t kMmaWarpgroup = 1;

// A gemm key as the kernels see it: C[batch] (m x n) = A[batch] (m x k) *
// B[batch] (k x n), dense operands (leading dimension = the contiguous
// extent), batch entries one after another.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool a_col_major = false, b_col_major = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  // Bytes of an A or B element: 2 (bf16, f16), or 4 (f32 read as tf32).
  int64_t element_bytes = 2;
  int64_t out_element_bytes = 2;  // of C: 2 (bf16, f16) or 4 (f32)
  bool gated = false;             // KernelKey.gate: a second product with b_up
};
GemmProblem ProblemOf(const v1::KernelKey& key);

// The side of a variant's MMA base tiles: 32 where it runs the CDNA leaf's
// 32x32 MFMAs (mma_tile, on targets with mma_tile_32), else 16.
int64_t MmaTile(const Variant& v);

// Elements per global load for a leading dimension: the widest count of
// elements in 16 bytes or fewer (8, 4, 2, 1 for 16-bit elements; 4, 2, 1 for
// floats) that divides it.
int64_t VectorWidth(int64_t leading_dimension, int64_t element_bytes);

// The tile GEMM's launch for a variant: threads per block, blocks (one per
// block tile of C) on grid x, batch on grid z, dynamic shared memory: the
// larger of the operand pipeline and the k-group reduction scratch
// (ops/gemm/device/gemm_mma_multistage.h, plan<C>, computes the same); wgmma
// variants: split_k blocks per tile, the larger of the pipeline and the
// split-K partial tile, plus one swizzle atom of alignment slack
// (gemm_sm90a_wgmma.h, wgmma_plan<C>).
struct TileGemmLaunch {
  int64_t threads = 0;
  int64_t blocks = 0;
  int64_t batch = 1;
  int64_t shared_bytes = 0;
};
TileGemmLaunch TileGemmLaunchOf(const GemmProblem& problem, const GemmTarget& target,
                                const Variant& variant);

// Block tiles, warp grid (warps_k splits each stage's k steps over groups of
// warps: split-K inside the block, reduced through shared memory), pipeline
// stages and raster grouping. Two regimes: tiles of 64+ rows for m > 32
// (compute-bound), and small-M tiles of 16 or 32 rows that hold all of m and
// win bandwidth by splitting k over warps (decode). On sm_90a targets, for
// m > 32, the same block tiles also run as wgmma variants (mma =
// kMmaWarpgroup): warps_m = block_m / 64 warpgroups of warps_n = 4 warps,
// block_k = 64, the two deepest pipelines that fit, and, when the tiles
// fill less than a wave of SMs, split-K over a cluster of split_k blocks.
// f32 keys that allow tf32 (element_bytes 4, CUDA only) run the mma.sync
// loop on float tiles (tt/arch/sm80_tf32_mma_sync.h) with warp tiles of at most 1024
// elements (registers), no wgmma. Constraints keep each space to at most ~60 variants
// for the standard shapes.
SearchSpace TileGemmSpace(const GemmProblem& problem, const GemmTarget& target);

}  // namespace tiletune::kernels::gemm
