// tf32 part of the NVIDIA sm_80+ leaf: float tiles as tensor-core operands
// through mma.sync.m16n8k8 .tf32. With it, rt<float, ...> and st<float, ...>
// run the same ops as the 16-bit types (load, mma_AB / ABt / AtB / AtBt), so
// the tile GEMM (tt_gemm.h) serves f32 keys that allow tf32 unchanged.
//
// The base tile keeps the sm80 fragment geometry (tt::arch::frag): lane l
// holds rows g = l/4 and g+8, columns 2t, 2t+1, 8+2t, 8+2t+1 (t = l%4), so
// the accumulator and every epilogue stay as they are. m16n8k8 wants lane l
// to hold k = t and t+4 of its rows instead; since the product sums over k,
// any relabelling of k used by both operands gives the same result: logical
// k = t is our column 2t, k = t+4 our 2t+1. A and B agree on it, so each
// lane's pair of neighbouring columns feeds one mma and loads as 8 bytes.
//
// AMD: MFMA reads xf32 only on gfx940+ (CDNA3); the CDNA leaf targets gfx90a,
// so tt_leaf_cdna.h has no float operands and f32 keys keep the SIMT GEMM.
#ifndef TILETUNE_TT_LEAF_SM80_TF32_H
#define TILETUNE_TT_LEAF_SM80_TF32_H

#include "tt_leaf_sm80.h"

namespace tt::arch {

// PTX: an .tf32 mma operand is a .b32 register whose low 13 mantissa bits
// the tensor cores ignore (truncation). Rounding first (nearest, ties away:
// what cuBLAS's FAST_TF32 does too) halves the error of each product.
TT_DEVICE float round_tf32(float v) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return __uint_as_float(r);
}

// One 16x16 base tile of floats from a shared tile at (row, col), row a
// multiple of 8 and col of 16, rounded to tf32. row_l: each lane's two
// neighbouring columns (frag::run) are one 8-byte ld.shared inside one
// swizzled 16-byte chunk. col_l (the row_l tile of the transpose): each
// element comes from its own row of src. Either operand use places the
// registers alike: mma_op<float> picks them by element.
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(float (&dst)[8], const ST& src, int row, int col, row_l) {
  static_assert(sizeof(typename ST::dtype) == 4, "float base tiles load from float shared tiles");
  struct alignas(8) pair {
    float lo, hi;
  };
  const int l = lane_id();
#pragma unroll
  for (int e = 0; e < frag::elems; e += frag::run) {
    const pair p =
        *reinterpret_cast<const pair*>(&src.at(row + frag::row(l, e), col + frag::col(l, e)));
    dst[e] = round_tf32(p.lo);
    dst[e + 1] = round_tf32(p.hi);
  }
}
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(float (&dst)[8], const ST& src, int row, int col, col_l) {
  static_assert(sizeof(typename ST::dtype) == 4, "float base tiles load from float shared tiles");
  const int l = lane_id();
#pragma unroll
  for (int e = 0; e < frag::elems; ++e) {
    dst[e] = round_tf32(src.at(row + frag::col(l, e), col + frag::row(l, e)));
  }
}

// acc (16x16, row layout) += a (16x16 row layout: rows of A) * b^T (b holds
// rows of B^T), as four m16n8k8: two k halves (elements 0-3 and 4-7 of each
// operand) times two n halves (b's elements 0, 1 then 2, 3 of a half; acc's
// 0-3 then 4-7). Element order in a half is (g, 2t), (g, 2t+1), (g+8, 2t),
// (g+8, 2t+1): A's a0..a3 are elements 0, 2, 1, 3.
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
