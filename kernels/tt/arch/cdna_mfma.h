// AMD leaf of the tile library, CDNA2 (gfx90a) and later wave64 targets:
// v_mfma_f32_16x16x16{bf16_1k,f16} on registers (16x16x32 on gfx950), or
// with TT_MFMA_32 defined (a tile GEMM variant's choice) 32x32 base tiles on
// v_mfma_f32_32x32x8{bf16_1k,f16} (32x32x16 on gfx950); LDS reads into them, and
// global -> LDS copies staged through registers (gfx90a has no asynchronous
// copy into LDS that a compiler builtin exposes, so "async" copies complete
// at once and commit/wait are no-ops), and on gfx942 / gfx950 4- / 16-byte
// words loaded straight into LDS (copy_word_to_lds). Defines the same names as
// tt/arch/sm80_mma_sync.h.
#ifndef TILETUNE_TT_LEAF_CDNA_H
#define TILETUNE_TT_LEAF_CDNA_H

#include "tt/tile_base.h"

namespace tt::arch {

constexpr int lanes = 64;
static_assert(TT_WARP_SIZE == lanes, "the CDNA leaf runs wavefronts of 64 lanes");
// The k of one MMA step. gfx950's 16x16x32 MFMAs run at twice the rate of
// the 16x16x16 ones (which it keeps at CDNA3's): kernels step k by mma_k so
// that tile_mma.h can issue them on two base tiles at once. A 32x32 base
// tile spans k = 32 itself (four or two MFMAs, mma_op).
#if defined(__gfx950__) || defined(TT_MFMA_32)
constexpr int mma_k = 32;
#else
constexpr int mma_k = 16;
#endif

typedef short short4_t __attribute__((ext_vector_type(4)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef unsigned uint2_t __attribute__((ext_vector_type(2)));
typedef unsigned uint4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));

TT_DEVICE int lane_id() {
  return static_cast<int>(threadIdx.x) & 63;
}
TT_DEVICE int warp_id() {
  return static_cast<int>(threadIdx.x) >> 6;
}

// ---- Conversions -----------------------------------------------------------

TT_DEVICE float to_float(float v) {
  return v;
}
TT_DEVICE float to_float(bf16 v) {
  return __builtin_bit_cast(float, static_cast<unsigned>(v.bits) << 16);
}
TT_DEVICE float to_float(f16 v) {
  return static_cast<float>(__builtin_bit_cast(_Float16, v.bits));
}

template <class T>
struct convert;
template <>
struct convert<float> {
  TT_DEVICE static float from(float v) { return v; }
};
template <>
struct convert<bf16> {
  // Round to nearest even; NaNs stay (quiet) NaNs. gfx90a has no bf16
  // conversion instruction.
  TT_DEVICE static bf16 from(float v) {
    unsigned u = __builtin_bit_cast(unsigned, v);
    if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<unsigned short>((u >> 16) | 0x40u)};
    u += 0x7fffu + ((u >> 16) & 1u);
    return {static_cast<unsigned short>(u >> 16)};
  }
  TT_DEVICE static unsigned pack(float lo, float hi) {
    return static_cast<unsigned>(from(lo).bits) | (static_cast<unsigned>(from(hi).bits) << 16);
  }
  TT_DEVICE static void unpack(unsigned w, float& lo, float& hi) {
    lo = __builtin_bit_cast(float, w << 16);
    hi = __builtin_bit_cast(float, w & 0xffff0000u);
  }
};
template <>
struct convert<f16> {
  TT_DEVICE static f16 from(float v) {
    return {__builtin_bit_cast(unsigned short, static_cast<_Float16>(v))};
  }
  TT_DEVICE static unsigned pack(float lo, float hi) {
    return static_cast<unsigned>(from(lo).bits) | (static_cast<unsigned>(from(hi).bits) << 16);
  }
  TT_DEVICE static void unpack(unsigned w, float& lo, float& hi) {
    lo = to_float(f16{static_cast<unsigned short>(w & 0xffffu)});
    hi = to_float(f16{static_cast<unsigned short>(w >> 16)});
  }
};

// ---- Fragment geometry -----------------------------------------------------
#if defined(TT_MFMA_32)
// A 32x32 base tile in row layout as the 32x32x8 MFMA's operands hold it (k
// along columns) and, fed b before a (mma_op), its accumulator: lane l holds
// row l%32, in four runs of 4 consecutive columns 8q + 4*(l/32), q = 0..3.
struct frag {
  static constexpr int side = 32;
  static constexpr int elems = 16;
  static constexpr int run = 4;
  TT_DEVICE static constexpr int row(int lane, int) { return lane & 31; }
  TT_DEVICE static constexpr int col(int lane, int e) {
    return ((e >> 2) << 3) + ((lane >> 5) << 2) + (e & 3);
  }

  static constexpr int row_slots = 1;
  static constexpr int col_slots = 16;
  TT_DEVICE static int row_slot(int) { return 0; }
  TT_DEVICE static int col_slot(int e) { return e; }
  TT_DEVICE static int slot_row(int lane, int) { return lane & 31; }
  TT_DEVICE static int slot_col(int lane, int s) { return col(lane, s); }

  template <class Op>
  TT_DEVICE static float across_row_lanes(float v, Op op) {
    return op(v, shfl_xor(v, 32));
  }
  template <class Op>
  TT_DEVICE static float across_col_lanes(float v, Op op) {
    v = op(v, shfl_xor(v, 1));
    v = op(v, shfl_xor(v, 2));
    v = op(v, shfl_xor(v, 4));
    v = op(v, shfl_xor(v, 8));
    return op(v, shfl_xor(v, 16));
  }
  TT_DEVICE static bool row_owner(int lane) { return (lane >> 5) == 0; }
  TT_DEVICE static bool col_owner(int lane) { return (lane & 31) == 0; }
};
#else
// A 16x16 base tile in row layout is spread over the wavefront as the
// 16x16x16 MFMA's operands hold it: lane l holds 4 consecutive elements of
// row l%16, columns 4*(l/16) to 4*(l/16)+3.
struct frag {
  static constexpr int side = 16;
  static constexpr int elems = 4;
  static constexpr int run = 4;
  TT_DEVICE static constexpr int row(int lane, int) { return lane & 15; }
  TT_DEVICE static constexpr int col(int lane, int e) { return ((lane >> 4) << 2) + e; }

  static constexpr int row_slots = 1;
  static constexpr int col_slots = 4;
  TT_DEVICE static int row_slot(int) { return 0; }
  TT_DEVICE static int col_slot(int e) { return e; }
  TT_DEVICE static int slot_row(int lane, int) { return lane & 15; }
  TT_DEVICE static int slot_col(int lane, int s) { return ((lane >> 4) << 2) + s; }

  template <class Op>
  TT_DEVICE static float across_row_lanes(float v, Op op) {
    v = op(v, shfl_xor(v, 16));
    return op(v, shfl_xor(v, 32));
  }
  template <class Op>
  TT_DEVICE static float across_col_lanes(float v, Op op) {
    v = op(v, shfl_xor(v, 1));
    v = op(v, shfl_xor(v, 2));
    v = op(v, shfl_xor(v, 4));
    return op(v, shfl_xor(v, 8));
  }
  TT_DEVICE static bool row_owner(int lane) { return (lane >> 4) == 0; }
  TT_DEVICE static bool col_owner(int lane) { return (lane & 15) == 0; }
};
#endif

// Every element of a base tile sits in exactly one lane's registers, and a
// lane's runs are consecutive columns of one row.
template <class F>
constexpr bool frag_places_each_element_once() {
  bool seen[F::side * F::side] = {};
  for (int lane = 0; lane < lanes; ++lane) {
    for (int e = 0; e < F::elems; ++e) {
      const int r = F::row(lane, e), c = F::col(lane, e);
      if (r < 0 || r >= F::side || c < 0 || c >= F::side || seen[r * F::side + c]) return false;
      if (e % F::run && (r != F::row(lane, e - 1) || c != F::col(lane, e - 1) + 1)) return false;
      seen[r * F::side + c] = true;
    }
  }
  return lanes * F::elems == F::side * F::side;
}
static_assert(frag_places_each_element_once<frag>(), "a base tile's layout is a permutation");

// ---- LDS -> registers --------------------------------------------------------
// A row-layout read is a ds_read_b64 whose 16-lane passes take rows r to
// r + 15 of one column run: shared tiles swap the 8-byte halves of rows
// 8-15 (st). gfx950 loads 16-byte words straight into LDS, which cannot
// write a swapped chunk, so its tiles keep the 2-way conflict.
#if !defined(__gfx950__)
#define TT_LDS_HALF_SWAP 1
#endif

// The LDS model the row reads are checked against at compile time (no AMD
// GPU runs them here): 32 banks of 4 bytes; a ds_read_b64 pass serves 16
// lanes, each two banks. Whether ST's layout places every element once, and
// the 16 rows of each row-read pass in 32 different banks.
template <class ST>
constexpr bool lds_layout_places_each_element_once() {
  bool seen[ST::rows * ST::cols] = {};
  for (int r = 0; r < ST::rows; ++r) {
    for (int c = 0; c < ST::cols; ++c) {
      const int at = ST::byte_offset(r, c);
      if (at < 0 || at >= ST::bytes || at % static_cast<int>(sizeof(typename ST::dtype))) {
        return false;
      }
      bool& slot = seen[at / static_cast<int>(sizeof(typename ST::dtype))];
      if (slot) return false;
      slot = true;
    }
  }
  return true;
}
template <class ST>
constexpr bool lds_row_reads_conflict_free() {
  for (int r0 = 0; r0 + 16 <= ST::rows; r0 += 16) {
    for (int c = 0; c < ST::cols; c += 4) {
      unsigned banks = 0;
      for (int l = 0; l < 16; ++l) {
        const unsigned pair = 3u << (ST::byte_offset(r0 + l, c) / 4 % 32);
        if (banks & pair) return false;
        banks |= pair;
      }
    }
  }
  return true;
}
#if defined(TT_MFMA_32)
// Row layout: each of a lane's four runs is contiguous in a shared row (an
// 8-byte read each, 8 columns apart). Column layout: they run down a
// column (a read each). MFMA takes A and B operands alike, so the operand a
// tile feeds (B_OPERAND) changes nothing here.
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(unsigned (&dst)[8], const ST& src, int row, int col, row_l) {
  static_assert(lds_layout_places_each_element_once<ST>(), "a shared tile layout is a permutation");
#if defined(TT_LDS_HALF_SWAP)
  static_assert(lds_row_reads_conflict_free<ST>(), "row reads of this tile conflict in LDS banks");
#endif
  const int l = lane_id();
  const char* base = reinterpret_cast<const char*>(src.data);
  const int r = row + (l & 31), c = col + ((l >> 5) << 2);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uint2_t v = *reinterpret_cast<const uint2_t*>(base + src.byte_offset(r, c + 8 * q));
    dst[2 * q] = v.x;
    dst[2 * q + 1] = v.y;
  }
}
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(unsigned (&dst)[8], const ST& src, int row, int col, col_l) {
  const int l = lane_id();
  const char* base = reinterpret_cast<const char*>(src.data);
  const int r = row + ((l >> 5) << 2), c = col + (l & 31);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    unsigned short e[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      e[i] = *reinterpret_cast<const unsigned short*>(base + src.byte_offset(r + 8 * q + i, c));
    }
    dst[2 * q] = static_cast<unsigned>(e[0]) | (static_cast<unsigned>(e[1]) << 16);
    dst[2 * q + 1] = static_cast<unsigned>(e[2]) | (static_cast<unsigned>(e[3]) << 16);
  }
}
#else
// Row layout: each lane's 4 elements are contiguous in a shared row (one
// 8-byte read). Column layout: they run down a column (4 reads). MFMA takes
// A and B operands alike, so the operand a tile feeds (B_OPERAND) changes
// nothing here.
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(unsigned (&dst)[2], const ST& src, int row, int col, row_l) {
  static_assert(lds_layout_places_each_element_once<ST>(), "a shared tile layout is a permutation");
#if defined(TT_LDS_HALF_SWAP)
  static_assert(lds_row_reads_conflict_free<ST>(), "row reads of this tile conflict in LDS banks");
#endif
  const int l = lane_id();
  const char* base = reinterpret_cast<const char*>(src.data);
  const uint2_t v = *reinterpret_cast<const uint2_t*>(
      base + src.byte_offset(row + (l & 15), col + ((l >> 4) << 2)));
  dst[0] = v.x;
  dst[1] = v.y;
}
template <bool B_OPERAND, class ST>
TT_DEVICE void load_base(unsigned (&dst)[2], const ST& src, int row, int col, col_l) {
  const int l = lane_id();
  const char* base = reinterpret_cast<const char*>(src.data);
  const int r = row + ((l >> 4) << 2), c = col + (l & 15);
  unsigned short e[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    e[i] = *reinterpret_cast<const unsigned short*>(base + src.byte_offset(r + i, c));
  }
  dst[0] = static_cast<unsigned>(e[0]) | (static_cast<unsigned>(e[1]) << 16);
  dst[1] = static_cast<unsigned>(e[2]) | (static_cast<unsigned>(e[3]) << 16);
}
#endif

// ---- Matrix cores -------------------------------------------------------------
// acc (a base tile, row layout) += a * b^T with a and b^T in row layout. The
// MFMA computes X*Y with its result spread down columns; fed X = b (rows of
// B^T) and Y = a, it yields (A*B^T)^T in that spread, which is A*B^T in our
// row layout.
// acc += one MFMA builtin of X = b and Y = a, their registers (2 or 4
// packed words) cast to the vector type V it takes, the accumulators (4 or
// 16) to a float vector: the round trip every wrapper below makes.
template <int N>
struct acc_vector;
template <>
struct acc_vector<4> {
  using type = float4_t;
};
template <>
struct acc_vector<16> {
  using type = float16_t;
};
// Element by element with constant indices, as the 16x16 path always wrote
// them ({acc[0], ..., acc[3]}): its code objects stayed byte-identical.
template <class T, T... I>
struct index_list {};
template <class V, int N, int... I>
TT_DEVICE V to_vector(const float (&acc)[N], index_list<int, I...>) {
  return V{acc[I]...};
}
template <class V, int N, int... I>
TT_DEVICE void from_vector(float (&acc)[N], const V& c, index_list<int, I...>) {
  ((acc[I] = c[I]), ...);
}
template <class V, int N, class Words, class Mfma>
TT_DEVICE void mfma_accumulate(float (&acc)[N], const Words& a, const Words& b, Mfma mfma) {
  using C = typename acc_vector<N>::type;
  const __make_integer_seq<index_list, int, N> each;
  C c = to_vector<C>(acc, each);
  c = mfma(__builtin_bit_cast(V, b), __builtin_bit_cast(V, a), c);
  from_vector(acc, c, each);
}

#if defined(__gfx950__)
typedef __bf16 bf16x8_t __attribute__((ext_vector_type(8)));
typedef _Float16 half8_t __attribute__((ext_vector_type(8)));
#endif

template <class T>
struct mma_op;
#if defined(TT_MFMA_32)
// A 32x32 base tile spans k = 32: run q of a lane's elements (k 8q + 4(l/32)
// + 0..3) is the k slice of 8 that one 32x32x8 MFMA takes, which gives lane
// l k 4(l/32).. of it. gfx950's double-rate 32x32x16 gives lane l k 8(l/32)
// + 0..7 of a slice of 16: fed runs 2p and 2p + 1 of both operands, it sums
// the same products in another order, which a dot product does not see.
TT_DEVICE uint2_t run_of(const unsigned (&w)[8], int q) {
  return uint2_t{w[2 * q], w[2 * q + 1]};
}
TT_DEVICE uint4_t runs_of(const unsigned (&w)[8], int p) {
  return uint4_t{w[4 * p], w[4 * p + 1], w[4 * p + 2], w[4 * p + 3]};
}
// The MFMA of one k slice: 32x32x8, or gfx950's 32x32x16 on two runs.
template <class T>
struct mfma32;
#if defined(__gfx950__)
template <>
struct mfma32<bf16> {
  using operand = bf16x8_t;
  TT_DEVICE static float16_t issue(operand x, operand y, float16_t c) {
    return __builtin_amdgcn_mfma_f32_32x32x16_bf16(x, y, c, 0, 0, 0);
  }
};
template <>
struct mfma32<f16> {
  using operand = half8_t;
  TT_DEVICE static float16_t issue(operand x, operand y, float16_t c) {
    return __builtin_amdgcn_mfma_f32_32x32x16_f16(x, y, c, 0, 0, 0);
  }
};
#else
template <>
struct mfma32<bf16> {
  using operand = short4_t;
  TT_DEVICE static float16_t issue(operand x, operand y, float16_t c) {
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x, y, c, 0, 0, 0);
  }
};
template <>
struct mfma32<f16> {
  using operand = half4_t;
  TT_DEVICE static float16_t issue(operand x, operand y, float16_t c) {
    return __builtin_amdgcn_mfma_f32_32x32x8f16(x, y, c, 0, 0, 0);
  }
};
#endif
template <class T>
struct mma_op {
  TT_DEVICE static void base(float (&acc)[16], const unsigned (&a)[8], const unsigned (&b)[8]) {
    using M = mfma32<T>;
#if defined(__gfx950__)
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      mfma_accumulate<typename M::operand>(acc, runs_of(a, p), runs_of(b, p), M::issue);
    }
#else
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      mfma_accumulate<typename M::operand>(acc, run_of(a, q), run_of(b, q), M::issue);
    }
#endif
  }
};
#else
template <>
struct mma_op<bf16> {
  TT_DEVICE static void base(float (&acc)[4], const unsigned (&a)[2], const unsigned (&b)[2]) {
    mfma_accumulate<short4_t>(acc, uint2_t{a[0], a[1]}, uint2_t{b[0], b[1]},
                              [](short4_t x, short4_t y, float4_t c) {
                                return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(x, y, c, 0, 0, 0);
                              });
  }
};
template <>
struct mma_op<f16> {
  TT_DEVICE static void base(float (&acc)[4], const unsigned (&a)[2], const unsigned (&b)[2]) {
    mfma_accumulate<half4_t>(acc, uint2_t{a[0], a[1]}, uint2_t{b[0], b[1]},
                             [](half4_t x, half4_t y, float4_t c) {
                               return __builtin_amdgcn_mfma_f32_16x16x16f16(x, y, c, 0, 0, 0);
                             });
  }
};

#if defined(__gfx950__)
// acc += a * b^T over k = 32: base tiles (a0, b0) and (a1, b1) are two
// consecutive k16 slices. The 16x16x32 MFMA gives lane group l/16 the k
// indices 8(l/16)..8(l/16)+7 of both operands; fed a0's four elements then
// a1's (k 4(l/16).. of each slice) and b's alike, it sums the same 32
// products in another order, which a dot product does not see.
template <class T>
struct mma_pair_op;
template <>
struct mma_pair_op<bf16> {
  TT_DEVICE static void pair(float (&acc)[4], const unsigned (&a0)[2], const unsigned (&a1)[2],
                             const unsigned (&b0)[2], const unsigned (&b1)[2]) {
    mfma_accumulate<bf16x8_t>(acc, uint4_t{a0[0], a0[1], a1[0], a1[1]},
                              uint4_t{b0[0], b0[1], b1[0], b1[1]},
                              [](bf16x8_t x, bf16x8_t y, float4_t c) {
                                return __builtin_amdgcn_mfma_f32_16x16x32_bf16(x, y, c, 0, 0, 0);
                              });
  }
};
template <>
struct mma_pair_op<f16> {
  TT_DEVICE static void pair(float (&acc)[4], const unsigned (&a0)[2], const unsigned (&a1)[2],
                             const unsigned (&b0)[2], const unsigned (&b1)[2]) {
    mfma_accumulate<half8_t>(acc, uint4_t{a0[0], a0[1], a1[0], a1[1]},
                             uint4_t{b0[0], b0[1], b1[0], b1[1]},
                             [](half8_t x, half8_t y, float4_t c) {
                               return __builtin_amdgcn_mfma_f32_16x16x32_f16(x, y, c, 0, 0, 0);
                             });
  }
};
#endif
#endif

// ---- Global memory -> LDS ------------------------------------------------------
// Copies BYTES, zero-filling past `src_bytes`; completes before returning.
template <int BYTES>
TT_DEVICE void copy_async(void* dst, const void* src, int src_bytes) {
  static_assert(BYTES == 2 || BYTES == 4 || BYTES == 8 || BYTES == 16,
                "copy_async moves 2, 4, 8 or 16 bytes");
  if (src_bytes == BYTES) {
    if constexpr (BYTES == 16) {
      *static_cast<uint4_t*>(dst) = *static_cast<const uint4_t*>(src);
    } else if constexpr (BYTES == 8) {
      *static_cast<uint2_t*>(dst) = *static_cast<const uint2_t*>(src);
    } else if constexpr (BYTES == 4) {
      *static_cast<unsigned*>(dst) = *static_cast<const unsigned*>(src);
    } else {
      *static_cast<unsigned short*>(dst) = *static_cast<const unsigned short*>(src);
    }
    return;
  }
  unsigned short* d = static_cast<unsigned short*>(dst);
  const unsigned short* s = static_cast<const unsigned short*>(src);
#pragma unroll
  for (int i = 0; i < BYTES / 2; ++i) d[i] = 2 * i < src_bytes ? s[i] : 0;
}
template <int BYTES>
TT_DEVICE void copy_async(void* dst, const void* src) {
  copy_async<BYTES>(dst, src, BYTES);
}
// A whole 16-byte chunk into a chunk of LDS with its 8-byte halves at
// `half` and `half ^ 8` (st's half swap): one 16-byte load, two stores.
TT_DEVICE void copy_chunk_halves(char* dst_chunk, const void* src, int half) {
  const uint4_t v = *static_cast<const uint4_t*>(src);
  *reinterpret_cast<uint2_t*>(dst_chunk + half) = uint2_t{v.x, v.y};
  *reinterpret_cast<uint2_t*>(dst_chunk + (half ^ 8)) = uint2_t{v.z, v.w};
}
#if defined(__gfx950__) || defined(__gfx942__)
// CDNA3 and later load straight into LDS: gfx950 16 bytes a lane
// (global_load_lds_dwordx4), gfx942 4 (global_load_lds_dword). No
// registers and no wait between the load and the LDS write, so a stage of
// the pipeline lands while the waves compute on another. The wave's load
// writes 64 consecutive words of lds_direct_bytes at `wave_dst` (uniform
// across the wave), lane l the l-th, from that lane's `src`.
#define TT_LDS_DIRECT 1
#if defined(__gfx950__)
constexpr int lds_direct_bytes = 16;
#else
constexpr int lds_direct_bytes = 4;
#endif
TT_DEVICE void copy_word_to_lds(char* wave_dst, const void* src) {
  typedef __attribute__((address_space(1))) void global_void;
  typedef __attribute__((address_space(3))) void lds_void;
  // An LDS address is 32 bits; readfirstlane tells the compiler it is uniform.
  const unsigned lds = __builtin_amdgcn_readfirstlane(
      static_cast<unsigned>(reinterpret_cast<unsigned long long>(wave_dst)));
  __builtin_amdgcn_global_load_lds((global_void*)(const_cast<void*>(src)), (lds_void*)(lds),
                                   lds_direct_bytes, 0, 0);
}
TT_DEVICE void commit_async() {}
// The loads into LDS count in vmcnt; their groups are not told apart, so a
// wait for any number of groups waits for all (vmcnt 0, expcnt and
// lgkmcnt left alone: 0x0f70 in gfx9's s_waitcnt encoding).
template <int N>
TT_DEVICE void wait_async() {
  __builtin_amdgcn_s_waitcnt(0x0f70);
}
#else
TT_DEVICE void commit_async() {}
template <int N>
TT_DEVICE void wait_async() {}
#endif

// CDNA has no hardware tanh: the library one.
TT_DEVICE float tanh_approx(float x) {
  return tanhf(x);
}

// 2^x: the library's exp2f is one v_exp_f32 on CDNA.
TT_DEVICE float exp2_approx(float x) {
  return exp2f(x);
}

TT_DEVICE void trap() {
  __builtin_trap();
}

}  // namespace tt::arch

#endif
