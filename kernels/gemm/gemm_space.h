#pragma once

#include <cstdint>

#include "kernels/gpu/gpu_source.h"
#include "kernels/search_space.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels::gemm {

// What the tile GEMM templates need to know about a GPU target beyond its
// vendor: limits the search space must respect, and what its tile-library
// leaf does (kernels/tile/include/tt/tt_leaf_*.h).
struct GemmTarget {
  gpu::GpuVendor vendor;
  int64_t max_shared_bytes;  // dynamic shared memory (LDS) one block may use
  int64_t store_run;         // consecutive output columns one lane stores at once (frag::run)
  bool async_copies;         // copies overlap compute, so deeper pipelines pay
};

// H200 / H100 (sm_90): 227 KiB of shared memory per block once the executor
// raises the dynamic limit; the sm80 leaf's cp.async pipeline.
inline constexpr GemmTarget kSm90Target{gpu::kCuda, 227 * 1024, 2, true};
// MI200 (gfx90a): 64 KiB of LDS; the CDNA leaf stages copies synchronously.
inline constexpr GemmTarget kGfx90aTarget{gpu::kHip, 64 * 1024, 4, false};

// A gemm key as the kernels see it: C[batch] (m x n) = A[batch] (m x k) *
// B[batch] (k x n), dense operands (leading dimension = the contiguous
// extent), batch entries one after another.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool a_col_major = false, b_col_major = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
};
GemmProblem ProblemOf(const v1::KernelKey& key);

// Elements per global load for a leading dimension: the widest of 8, 4, 2, 1
// (16 bytes down to one 16-bit element) that divides it.
int64_t VectorWidth(int64_t leading_dimension);

// The tile GEMM's launch for a variant: threads per block, blocks (one per
// block tile of C) on grid x, batch on grid z, dynamic shared memory: the
// larger of the operand pipeline and the k-group reduction scratch
// (kernels/gemm/include/tt_gemm.h, plan<C>, computes the same).
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
// win bandwidth by splitting k over warps (decode). Constraints keep each
// space to at most ~40 variants for the standard shapes.
SearchSpace TileGemmSpace(const GemmProblem& problem, const GemmTarget& target);

}  // namespace tiletune::kernels::gemm
