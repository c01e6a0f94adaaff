// The tile types: register tiles (rt), shared tiles (st), register and
// shared vectors (rv, sv) and views of global matrices (gl). Shapes and
// element types are portable; how a base tile is spread over a warp's lanes
// comes from the arch leaf (tt::arch::frag).
#ifndef TILETUNE_TT_TILE_TYPES_H
#define TILETUNE_TT_TILE_TYPES_H

#include "tt/tile_base.h"

namespace tt {

// Where element e of a base tile in layout L sits, and which lanes share
// its rows or columns. col_l is the transpose of row_l, so it swaps them.
template <class L>
struct geom;
template <>
struct geom<row_l> {
  using f = arch::frag;
  TT_DEVICE static int row(int lane, int e) { return f::row(lane, e); }
  TT_DEVICE static int col(int lane, int e) { return f::col(lane, e); }
  static constexpr int row_slots = f::row_slots, col_slots = f::col_slots;
  TT_DEVICE static int row_slot(int e) { return f::row_slot(e); }
  TT_DEVICE static int col_slot(int e) { return f::col_slot(e); }
  TT_DEVICE static int slot_row(int lane, int s) { return f::slot_row(lane, s); }
  TT_DEVICE static int slot_col(int lane, int s) { return f::slot_col(lane, s); }
  template <class Op>
  TT_DEVICE static float across_row_lanes(float v, Op op) {
    return f::across_row_lanes(v, op);
  }
  template <class Op>
  TT_DEVICE static float across_col_lanes(float v, Op op) {
    return f::across_col_lanes(v, op);
  }
  TT_DEVICE static bool row_owner(int lane) { return f::row_owner(lane); }
  TT_DEVICE static bool col_owner(int lane) { return f::col_owner(lane); }
  static constexpr int col_run = f::run;  // elements a lane holds side by side in a row
};
template <>
struct geom<col_l> {
  using f = arch::frag;
  TT_DEVICE static int row(int lane, int e) { return f::col(lane, e); }
  TT_DEVICE static int col(int lane, int e) { return f::row(lane, e); }
  static constexpr int row_slots = f::col_slots, col_slots = f::row_slots;
  TT_DEVICE static int row_slot(int e) { return f::col_slot(e); }
  TT_DEVICE static int col_slot(int e) { return f::row_slot(e); }
  TT_DEVICE static int slot_row(int lane, int s) { return f::slot_col(lane, s); }
  TT_DEVICE static int slot_col(int lane, int s) { return f::slot_row(lane, s); }
  template <class Op>
  TT_DEVICE static float across_row_lanes(float v, Op op) {
    return f::across_col_lanes(v, op);
  }
  template <class Op>
  TT_DEVICE static float across_col_lanes(float v, Op op) {
    return f::across_row_lanes(v, op);
  }
  TT_DEVICE static bool row_owner(int lane) { return f::col_owner(lane); }
  TT_DEVICE static bool col_owner(int lane) { return f::row_owner(lane); }
  static constexpr int col_run = 1;
};

// The side of a base tile: 16, or 32 where the leaf's MMA takes 32x32
// tiles (the CDNA leaf with TT_MFMA_32).
constexpr int base_side = arch::frag::side;

// One base tile: this lane's share of it. Its layout is the
// enclosing rt's: the registers of a col_l base tile are those of the
// row_l base tile of its transpose.
template <class T>
struct rt_base {
  using word = typename elem<T>::word;
  static constexpr int elems = arch::frag::elems;
  static constexpr int words = elems / elem<T>::per_word;
  word data[words];
};

// A register tile of R x C elements held by one warp, as (R / base_side) x
// (C / base_side) base tiles.
template <class T, int R, int C, class L = row_l>
struct rt {
  static_assert(R % base_side == 0 && C % base_side == 0,
                "register tiles are made of whole base tiles");
  using dtype = T;
  using layout = L;
  static constexpr int rows = R, cols = C, height = R / base_side, width = C / base_side;
  rt_base<T> tiles[height][width];
};

// Element e of a base tile as a float, and the pair (e, e+1) with e even.
template <class T>
TT_DEVICE float get(const rt_base<T>& t, int e) {
  if constexpr (elem<T>::per_word == 1) {
    return t.data[e];
  } else {
    float lo, hi;
    arch::convert<T>::unpack(t.data[e >> 1], lo, hi);
    return (e & 1) ? hi : lo;
  }
}
template <class T>
TT_DEVICE void get_pair(const rt_base<T>& t, int e, float& lo, float& hi) {
  if constexpr (elem<T>::per_word == 1) {
    lo = t.data[e];
    hi = t.data[e + 1];
  } else {
    arch::convert<T>::unpack(t.data[e >> 1], lo, hi);
  }
}
template <class T>
TT_DEVICE void set_pair(rt_base<T>& t, int e, float lo, float hi) {
  if constexpr (elem<T>::per_word == 1) {
    t.data[e] = lo;
    t.data[e + 1] = hi;
  } else {
    t.data[e >> 1] = arch::convert<T>::pack(lo, hi);
  }
}

// A shared tile of R x C elements, rows stored one after another with the
// 16-byte chunks of each row permuted (XOR swizzle) so that the 8 rows one
// ldmatrix (or a wavefront's LDS read) touches at the same column fall in
// 8 different bank groups: 8 rows x 16 bytes = all 32 banks once. Where the
// leaf defines TT_LDS_HALF_SWAP (CDNA before gfx950), rows 8 to 15 of every
// 16 also swap the two 8-byte halves of each chunk: a ds_read_b64 serves 16
// lanes a pass, rows r to r + 15 of one column run, and without the swap
// rows r and r + 8 would share their banks.
template <class T, int R, int C>
struct st {
  using dtype = T;
  static constexpr int rows = R, cols = C;
  static constexpr int row_bytes = C * static_cast<int>(sizeof(T));
  static constexpr int chunk_elems = 16 / static_cast<int>(sizeof(T));
  static constexpr int row_chunks = row_bytes / 16;
  static_assert(row_bytes % 16 == 0, "shared tile rows are whole 16-byte chunks");
  static_assert((row_chunks & (row_chunks - 1)) == 0 || row_chunks % 8 == 0,
                "the swizzle needs a power-of-two or multiple-of-8 chunk count per row");
  // Rows sharing one 128-byte line, and how many chunk positions rotate.
  static constexpr int line_rows = row_chunks >= 8 ? 1 : 8 / row_chunks;
  static constexpr int swizzle = row_chunks >= 8 ? 8 : row_chunks;
  static constexpr int bytes = R * row_bytes;

  alignas(128) T data[R * C];

#if defined(TT_LDS_HALF_SWAP)
  static constexpr int half_swap = 8;
#else
  static constexpr int half_swap = 0;
#endif
  // Rows after which the layout repeats: a caller whose rows start at a
  // multiple of it can hoist a row's pattern out of its loops.
  static constexpr int pattern_rows = half_swap ? 16 : 8;

  // The XOR pattern of a row's chunks (it repeats every 8 rows: line_rows *
  // swizzle is 8 or row_chunks >= 8) and of the bytes inside each chunk.
  TT_DEVICE static constexpr int swizzle_of(int row) {
    return ((row & 7) / line_rows) % swizzle;
  }
  TT_DEVICE static constexpr int half_of(int row) {
    return (row & 8) ? half_swap : 0;
  }
  TT_DEVICE static constexpr int byte_offset(int row, int col) {
    return row * row_bytes + (((col / chunk_elems) ^ swizzle_of(row)) << 4) +
           (((col % chunk_elems) * static_cast<int>(sizeof(T))) ^ half_of(row));
  }
  TT_DEVICE T& at(int row, int col) {
    return *reinterpret_cast<T*>(reinterpret_cast<char*>(data) + byte_offset(row, col));
  }
  TT_DEVICE const T& at(int row, int col) const {
    return *reinterpret_cast<const T*>(reinterpret_cast<const char*>(data) + byte_offset(row, col));
  }
};

// How many values of a per_row / per_col vector one lane keeps per base tile.
template <class D, class L>
struct vec_slots;
template <class L>
struct vec_slots<per_row, L> {
  static constexpr int value = geom<L>::row_slots;
};
template <class L>
struct vec_slots<per_col, L> {
  static constexpr int value = geom<L>::col_slots;
};

// A register vector of N values aligned with the rows (per_row) or columns
// (per_col) of a register tile in layout L: each lane keeps, as floats, the
// values of the rows/columns its tile elements sit in.
template <int N, class D, class L = row_l>
struct rv {
  static_assert(N % base_side == 0, "register vectors cover whole base tiles");
  using distribution = D;
  using layout = L;
  static constexpr int length = N, blocks = N / base_side, slots = vec_slots<D, L>::value;
  float data[blocks][slots];
};

// A vector of N elements in shared memory.
template <class T, int N>
struct sv {
  static constexpr int length = N;
  alignas(16) T data[N];
};

// A row-major matrix in global memory: rows x cols elements, row r starting
// ld elements after row r-1. A column-major matrix is the row-major view of
// its transpose.
template <class T>
struct gl {
  T* ptr;
  long long rows, cols, ld;
  TT_DEVICE T* at(long long row, long long col) const { return ptr + row * ld + col; }
};

// Carves tiles out of the kernel's dynamic shared memory, 128-byte aligned.
struct shared_allocator {
  char* next;
  template <class S>
  TT_DEVICE S& take() {
    S& s = *reinterpret_cast<S*>(next);
    next += (sizeof(S) + 127) / 128 * 128;
    return s;
  }
};

}  // namespace tt

#endif
