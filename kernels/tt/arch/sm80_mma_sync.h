// NVIDIA leaf of the tile library, sm_80 and later (the H200's sm_90 too):
// warp-wide mma.sync.m16n8k16 on registers, ldmatrix from shared memory,
// cp.async from global memory into shared memory. Everything above this
// file is written against the names defined here (namespace tt::arch), and
// the AMD leaf (tt/arch/cdna_mfma.h) defines the same names.
#ifndef TILETUNE_TT_LEAF_SM80_H
#define TILETUNE_TT_LEAF_SM80_H

#include "tt/tile_base.h"

namespace tt::arch {

constexpr int lanes = 32;
// The k of one MMA step: m16n8k16 takes one base tile of each operand.
constexpr int mma_k = 16;
static_assert(TT_WARP_SIZE == lanes, "the sm80 leaf runs warps of 32 lanes");

TT_DEVICE int lane_id() {
  return static_cast<int>(threadIdx.x) & 31;
}
TT_DEVICE int warp_id() {
  return static_cast<int>(threadIdx.x) >> 5;
}

// ---- Conversions -----------------------------------------------------------

TT_DEVICE float to_float(float v) {
  return v;
}
TT_DEVICE float to_float(bf16 v) {
  return __uint_as_float(static_cast<unsigned>(v.bits) << 16);
}
TT_DEVICE float to_float(f16 v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
  return f;
}

template <class T>
struct convert;
template <>
struct convert<float> {
  TT_DEVICE static float from(float v) { return v; }
};
template <>
struct convert<bf16> {
  TT_DEVICE static bf16 from(float v) {
    bf16 r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
    return r;
  }
  // Two values in one register, `lo` in the low half.
  TT_DEVICE static unsigned pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
  TT_DEVICE static void unpack(unsigned w, float& lo, float& hi) {
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
  }
};
template <>
struct convert<f16> {
  TT_DEVICE static f16 from(float v) {
    f16 r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
    return r;
  }
  TT_DEVICE static unsigned pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
  TT_DEVICE static void unpack(unsigned w, float& lo, float& hi) {
    asm("{\n  .reg .f16 l, h;\n  mov.b32 {l, h}, %2;\n  cvt.f32.f16 %0, l;\n"
        "  cvt.f32.f16 %1, h;\n}"
        : "=f"(lo), "=f"(hi)
        : "r"(w));
  }
};

// ---- Fragment geometry -----------------------------------------------------
// A 16x16 base tile in row layout is spread over the warp as m16n8k16 wants
// its A operand and its accumulator: lane l holds 8 elements; element e sits
// at row l/4 + 8*((e/2)%2), column 2*(l%4) + 8*(e/4) + e%2. Elements 2p and
// 2p+1 are neighbours in a row (one packed register for 16-bit types).
struct frag {
  static constexpr int side = 16;  // base tiles are side x side
  static constexpr int elems = 8;
  static constexpr int run = 2;  // consecutive columns held together
  TT_DEVICE static int row(int lane, int e) { return (lane >> 2) + ((e & 2) << 2); }
  TT_DEVICE static int col(int lane, int e) { return ((lane & 3) << 1) + ((e & 4) << 1) + (e & 1); }

  // The distinct rows (columns) a lane holds: its slots, and which slot an
  // element falls in.
  static constexpr int row_slots = 2;
  static constexpr int col_slots = 4;
  TT_DEVICE static int row_slot(int e) { return (e >> 1) & 1; }
  TT_DEVICE static int col_slot(int e) { return (e & 1) | ((e & 4) >> 1); }
  TT_DEVICE static int slot_row(int lane, int s) { return (lane >> 2) + (s << 3); }
  TT_DEVICE static int slot_col(int lane, int s) {
    return ((lane & 3) << 1) + (s & 1) + ((s >> 1) << 3);
  }

  // Combines a value over the lanes holding the same rows (the 4 lanes of a
  // quad) or the same columns (the 8 quads).
  template <class Op>
  TT_DEVICE static float across_row_lanes(float v, Op op) {
    v = op(v, shfl_xor(v, 1));
    return op(v, shfl_xor(v, 2));
  }
  template <class Op>
  TT_DEVICE static float across_col_lanes(float v, Op op) {
    v = op(v, shfl_xor(v, 4));
    v = op(v, shfl_xor(v, 8));
    return op(v, shfl_xor(v, 16));
  }
  // One lane of each group above, to write a shared value once.
  TT_DEVICE static bool row_owner(int lane) { return (lane & 3) == 0; }
  TT_DEVICE static bool col_owner(int lane) { return (lane >> 2) == 0; }
};

// ---- Shared memory -> registers ---------------------------------------------

TT_DEVICE unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// One 16x16 base tile of 16-bit elements from a shared tile at (row, col),
// row a multiple of 8 and col of 16, with one ldmatrix.x4: lane group
// j = lane / 8 addresses the rows of 8x8 quarter j, which lands in the j-th
// of four consecutive registers. A row_l base tile's registers hold the
// quarters at (row, col) offsets (0,0), (8,0), (0,8), (8,8); col_l, its
// transpose, (0,0), (0,8), (8,0), (8,8), read with .trans. Loaded for use
// as an A operand, quarters go in that order (mma wants all four
// consecutive); for a B operand as 0, 2, 1, 3 (mma wants registers 0 and 2,
// then 1 and 3, as consecutive pairs). Either way data[i] means the same
// quarter; only the register allocation differs. The lane's row alone sets
// the swizzle, so the compiler keeps it out of a caller's loops.
template <class ST>
TT_DEVICE unsigned base_tile_address(const ST& src, int row, int col, int lane_row, int lane_col) {
  const int chunk = ((col + lane_col) / ST::chunk_elems) ^ ST::swizzle_of(lane_row);
  return shared_address(src.data) + (row + lane_row) * ST::row_bytes + (chunk << 4);
}
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(unsigned (&dst)[4], const ST& src, int row, int col, row_l) {
  const int l = lane_id(), group = l >> 3;
  const int quarter = B_OPERAND ? ((group & 1) << 1) | (group >> 1) : group;
  const unsigned addr =
      base_tile_address(src, row, col, (l & 7) + ((quarter & 1) << 3), (quarter >> 1) << 3);
  unsigned& r1 = B_OPERAND ? dst[2] : dst[1];
  unsigned& r2 = B_OPERAND ? dst[1] : dst[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(dst[0]), "=r"(r1), "=r"(r2), "=r"(dst[3])
               : "r"(addr));
}
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(unsigned (&dst)[4], const ST& src, int row, int col, col_l) {
  const int l = lane_id(), group = l >> 3;
  const int quarter = B_OPERAND ? ((group & 1) << 1) | (group >> 1) : group;
  const unsigned addr =
      base_tile_address(src, row, col, (l & 7) + ((quarter >> 1) << 3), (quarter & 1) << 3);
  unsigned& r1 = B_OPERAND ? dst[2] : dst[1];
  unsigned& r2 = B_OPERAND ? dst[1] : dst[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(dst[0]), "=r"(r1), "=r"(r2), "=r"(dst[3])
               : "r"(addr));
}

// ---- Tensor cores --------------------------------------------------------------
// acc (16x16, row layout) += a (16x16 row layout: rows of A) * b^T, where b
// is 16x16 in row layout holding rows of B^T (N x K). Two m16n8k16: b's
// registers 0 and 2 are the first 8 columns of the product, 1 and 3 the rest.
template <class T>
struct mma_op;
template <>
struct mma_op<bf16> {
  TT_DEVICE static void base(float (&acc)[8], const unsigned (&a)[4], const unsigned (&b)[4]) {
#define TT_SM80_MMA(ACC0, ACC1, ACC2, ACC3, B0, B1)                                         \
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, " \
      "%7}, {%8, %9}, {%0, %1, %2, %3};"                                                    \
      : "+f"(ACC0), "+f"(ACC1), "+f"(ACC2), "+f"(ACC3)                                      \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(B0), "r"(B1))
    TT_SM80_MMA(acc[0], acc[1], acc[2], acc[3], b[0], b[2]);
    TT_SM80_MMA(acc[4], acc[5], acc[6], acc[7], b[1], b[3]);
#undef TT_SM80_MMA
  }
};
template <>
struct mma_op<f16> {
  TT_DEVICE static void base(float (&acc)[8], const unsigned (&a)[4], const unsigned (&b)[4]) {
#define TT_SM80_MMA(ACC0, ACC1, ACC2, ACC3, B0, B1)                                       \
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, " \
      "%7}, {%8, %9}, {%0, %1, %2, %3};"                                                  \
      : "+f"(ACC0), "+f"(ACC1), "+f"(ACC2), "+f"(ACC3)                                    \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(B0), "r"(B1))
    TT_SM80_MMA(acc[0], acc[1], acc[2], acc[3], b[0], b[2]);
    TT_SM80_MMA(acc[4], acc[5], acc[6], acc[7], b[1], b[3]);
#undef TT_SM80_MMA
  }
};

// ---- Global memory -> shared memory ---------------------------------------------
// Copies BYTES from global to shared memory without waiting. With
// `src_bytes`, bytes past it are zero-filled, so edge tiles need no second
// path. 4, 8 and 16 bytes go through cp.async (the source aligned to BYTES);
// 2 bytes (an unaligned 16-bit element) is a plain load and store.
template <int BYTES>
TT_DEVICE void copy_async(void* dst, const void* src, int src_bytes) {
  if constexpr (BYTES == 16) {
    asm volatile(
        "cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" ::"r"(shared_address(dst)),
        "l"(src), "r"(src_bytes)
        : "memory");
  } else if constexpr (BYTES == 8 || BYTES == 4) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(shared_address(dst)),
                 "l"(src), "n"(BYTES), "r"(src_bytes)
                 : "memory");
  } else {
    static_assert(BYTES == 2, "copy_async moves 2, 4, 8 or 16 bytes");
    *static_cast<unsigned short*>(dst) =
        src_bytes > 0 ? *static_cast<const unsigned short*>(src) : static_cast<unsigned short>(0);
  }
}
// All BYTES are inside the source.
template <int BYTES>
TT_DEVICE void copy_async(void* dst, const void* src) {
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(shared_address(dst)),
                 "l"(src)
                 : "memory");
  } else if constexpr (BYTES == 8 || BYTES == 4) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared_address(dst)), "l"(src),
                 "n"(BYTES)
                 : "memory");
  } else {
    static_assert(BYTES == 2, "copy_async moves 2, 4, 8 or 16 bytes");
    *static_cast<unsigned short*>(dst) = *static_cast<const unsigned short*>(src);
  }
}
// Closes the group of copies issued since the last commit.
TT_DEVICE void commit_async() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
// Waits until at most N committed groups are still in flight.
template <int N>
TT_DEVICE void wait_async() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// ---- Streams from global memory into registers -------------------------------------
// 16 bytes as four 32-bit words (packed 16-bit pairs, low half first).
struct words4 {
  unsigned w[4];
};
// Read once (a decode GEMM's weights): not kept in L1.
TT_DEVICE words4 load_streaming(const void* p) {
  words4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
               : "l"(p));
  return r;
}
// Read by many warps (a decode GEMM's activations): kept in L1.
TT_DEVICE words4 load_reused(const void* p) {
  words4 r;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3])
               : "l"(p));
  return r;
}

// One m16n8k16 on raw fragments: acc (rows lane/4 and lane/4 + 8, columns
// 2 (lane % 4) + {0, 1}) += a (16 x 16, row layout) * b (16 x 8, columns
// lane / 4, k 2 (lane % 4) + {0, 1} in b0 and + 8 in b1).
template <class T>
TT_DEVICE void mma_m16n8k16(float (&acc)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  static_assert(same_type<T, bf16>::value || same_type<T, f16>::value,
                "m16n8k16 here multiplies bf16 or f16");
  if constexpr (same_type<T, bf16>::value) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, "
        "%7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, "
        "%7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

TT_DEVICE void trap() {
  __trap();
}

// tanh in one SFU instruction (sm_75+), error about 2^-11: below what a
// 16-bit store rounds away.
TT_DEVICE float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 2^x in one SFU instruction (flush-to-zero; 2^-inf = 0): softmax with
// log2(e) folded into its scale.
TT_DEVICE float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace tt::arch

#endif
