// tf32 part of the NVIDIA sm_80+ leaf: float tiles as tensor-core operands
// through mma.sync.m16n8k8 .tf32. With it, rt<float, ...> and st<float, ...>
// run the same ops as the 16-bit types (load, mma_AB / ABt / AtB / AtBt), so
// the tile GEMM (gemm_mma_multistage.h) serves f32 keys that allow tf32 unchanged.
//
// Accumulators keep the sm80 fragment geometry (tt::arch::frag), so every
// epilogue runs unchanged. Operand tiles loaded for the tensor cores do
// not: m16n8k8 wants lane l = 4g + t to hold k = t and t+4 of its rows, and
// one ldmatrix (8 rows of 16 bytes = 4 floats each) hands out exactly
// that. So a float operand base tile holds rows g and g+8 (as frag says)
// and the k columns of operand_col(): elements 2p, 2p+1 are columns
// t + 8*(p/2) and t + 4 + 8*(p/2). Only mma reads such tiles.
//
// AMD: MFMA reads xf32 only on gfx940+ (CDNA3); the CDNA leaf targets gfx90a,
// so tt/arch/cdna_mfma.h has no float operands and f32 keys keep the SIMT GEMM.
#ifndef TILETUNE_TT_LEAF_SM80_TF32_H
#define TILETUNE_TT_LEAF_SM80_TF32_H

#include "tt/arch/sm80_mma_sync.h"

namespace tt::arch {

// PTX: an .tf32 mma operand is a .b32 register whose low 13 mantissa bits
// the tensor cores ignore (truncation). Rounding first (nearest, ties away)
// halves the error of each product; on the H200 our error then equals
// cuBLASLt FAST_TF32's (bench/results/2026-11-29-tf32-gemm-h200.md).
TT_DEVICE float round_tf32(float v) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return __uint_as_float(r);
}

// The k column of element e of a float operand base tile (see above).
TT_DEVICE int operand_col(int lane, int e) {
  return (lane & 3) + ((e & 1) << 2) + ((e >> 2) << 3);
}

// One 16x16 base tile of floats from a shared tile at (row, col), row a
// multiple of 8 and col of 16, rounded to tf32. row_l: two ldmatrix.x4, one
// per 8 columns; lane group j = lane / 8 addresses the rows of 8x4-float
// matrix j at (row, col) offsets (0,0), (0,4), (8,0), (8,4), which land in
// registers 0-3 as the elements above want. col_l (the row_l tile of the
// transpose): each element from its own row of src. Either operand use
// places the registers alike: mma_op<float> picks them by element.
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(float (&dst)[8], const ST& src, int row, int col, row_l) {
  static_assert(sizeof(typename ST::dtype) == 4, "float base tiles load from float shared tiles");
  const int l = lane_id(), group = l >> 3;
  const int lane_row = (l & 7) + ((group >> 1) << 3), lane_col = (group & 1) << 2;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    unsigned r[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(base_tile_address(src, row, col + 8 * half, lane_row, lane_col)));
#pragma unroll
    for (int i = 0; i < 4; ++i) dst[4 * half + i] = round_tf32(__uint_as_float(r[i]));
  }
}
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(float (&dst)[8], const ST& src, int row, int col, col_l) {
  static_assert(sizeof(typename ST::dtype) == 4, "float base tiles load from float shared tiles");
  const int l = lane_id();
#pragma unroll
  for (int e = 0; e < frag::elems; ++e) {
    dst[e] = round_tf32(src.at(row + operand_col(l, e), col + frag::row(l, e)));
  }
}

// acc (16x16, row layout) += a (16x16: rows of A) * b^T (b holds rows of
// B^T), as four m16n8k8: two k halves (elements 0-3 and 4-7 of each
// operand) times two n halves (b's elements 0, 1 then 2, 3 of a half; acc's
// 0-3 then 4-7). In a half, elements are (g, t), (g, t+4), (g+8, t),
// (g+8, t+4): A's a0..a3 are elements 0, 2, 1, 3.
template <>
struct mma_op<float> {
  TT_DEVICE static void base(float (&acc)[8], const float (&a)[8], const float (&b)[8]) {
#define TT_SM80_MMA_TF32(ACC, A, B)                                                        \
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, " \
      "%7}, {%8, %9}, {%0, %1, %2, %3};"                                                   \
      : "+f"(acc[ACC]), "+f"(acc[ACC + 1]), "+f"(acc[ACC + 2]), "+f"(acc[ACC + 3])         \
      : "r"(__float_as_uint(a[A])), "r"(__float_as_uint(a[A + 2])),                        \
        "r"(__float_as_uint(a[A + 1])), "r"(__float_as_uint(a[A + 3])),                    \
        "r"(__float_as_uint(b[B])), "r"(__float_as_uint(b[B + 1])))
#pragma unroll
    for (int h = 0; h < 8; h += 4) {
      TT_SM80_MMA_TF32(0, h, h);
      TT_SM80_MMA_TF32(4, h, h + 2);
    }
#undef TT_SM80_MMA_TF32
  }
};

}  // namespace tt::arch

#endif
