// Warp-level operations on register tiles and vectors, destination first.
// Written once over tt::geom (where each element of a base tile sits), so
// they are the same on every arch leaf.
#ifndef TILETUNE_TT_TILE_OPS_H
#define TILETUNE_TT_TILE_OPS_H

#include "tt/tile_types.h"

namespace tt {

// ---- Element-wise ---------------------------------------------------------------

// dst = fn(src) element by element; dst may hold another element type (a
// float accumulator converted to bf16 operands, say).
template <class TD, class TS, int R, int C, class L, class Fn>
TT_DEVICE void map(rt<TD, R, C, L>& dst, const rt<TS, R, C, L>& src, Fn fn) {
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; e += 2) {
        float lo, hi;
        get_pair(src.tiles[i][j], e, lo, hi);
        set_pair(dst.tiles[i][j], e, fn(lo), fn(hi));
      }
    }
  }
}

// dst = fn(a, b) element by element.
template <class TD, class TA, class TB, int R, int C, class L, class Fn>
TT_DEVICE void map(rt<TD, R, C, L>& dst, const rt<TA, R, C, L>& a, const rt<TB, R, C, L>& b,
                   Fn fn) {
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; e += 2) {
        float a0, a1, b0, b1;
        get_pair(a.tiles[i][j], e, a0, a1);
        get_pair(b.tiles[i][j], e, b0, b1);
        set_pair(dst.tiles[i][j], e, fn(a0, b0), fn(a1, b1));
      }
    }
  }
}

template <class T, int R, int C, class L>
TT_DEVICE void fill(rt<T, R, C, L>& dst, float value) {
  map(dst, dst, [value](float) { return value; });
}
template <class T, int R, int C, class L>
TT_DEVICE void zero(rt<T, R, C, L>& dst) {
  fill(dst, 0.0f);
}
// dst = src, converting the element type.
template <class TD, class TS, int R, int C, class L>
TT_DEVICE void copy(rt<TD, R, C, L>& dst, const rt<TS, R, C, L>& src) {
  map(dst, src, [](float v) { return v; });
}
template <class TD, class TS, int R, int C, class L>
TT_DEVICE void exp(rt<TD, R, C, L>& dst, const rt<TS, R, C, L>& src) {
  map(dst, src, [](float v) { return __expf(v); });
}
template <class TD, class TA, class TB, int R, int C, class L>
TT_DEVICE void add(rt<TD, R, C, L>& dst, const rt<TA, R, C, L>& a, const rt<TB, R, C, L>& b) {
  map(dst, a, b, [](float x, float y) { return x + y; });
}
template <class TD, class TA, class TB, int R, int C, class L>
TT_DEVICE void sub(rt<TD, R, C, L>& dst, const rt<TA, R, C, L>& a, const rt<TB, R, C, L>& b) {
  map(dst, a, b, [](float x, float y) { return x - y; });
}
template <class TD, class TA, class TB, int R, int C, class L>
TT_DEVICE void mul(rt<TD, R, C, L>& dst, const rt<TA, R, C, L>& a, const rt<TB, R, C, L>& b) {
  map(dst, a, b, [](float x, float y) { return x * y; });
}

// ---- Broadcasts -------------------------------------------------------------------

// Every row of dst becomes v (one value per column).
template <class T, int R, int C, class L>
TT_DEVICE void broadcast_row(rt<T, R, C, L>& dst, const rv<C, per_col, L>& v) {
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; e += 2) {
        set_pair(dst.tiles[i][j], e, v.data[j][geom<L>::col_slot(e)],
                 v.data[j][geom<L>::col_slot(e + 1)]);
      }
    }
  }
}

// Every column of dst becomes v (one value per row).
template <class T, int R, int C, class L>
TT_DEVICE void broadcast_col(rt<T, R, C, L>& dst, const rv<R, per_row, L>& v) {
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; e += 2) {
        set_pair(dst.tiles[i][j], e, v.data[i][geom<L>::row_slot(e)],
                 v.data[i][geom<L>::row_slot(e + 1)]);
      }
    }
  }
}

// ---- Reductions -------------------------------------------------------------------
// Each lane first folds its own elements of a row (column), then the lanes
// holding the same row (column) exchange partial results.

struct max_op {
  TT_DEVICE float operator()(float a, float b) const { return a > b ? a : b; }
};
struct sum_op {
  TT_DEVICE float operator()(float a, float b) const { return a + b; }
};

template <class T, int R, int C, class L, class Op>
TT_DEVICE void reduce_rows(rv<R, per_row, L>& dst, const rt<T, R, C, L>& src, Op op, float init) {
  using G = geom<L>;
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
    float acc[G::row_slots];
#pragma unroll
    for (int s = 0; s < G::row_slots; ++s) acc[s] = init;
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e) {
        acc[G::row_slot(e)] = op(acc[G::row_slot(e)], get(src.tiles[i][j], e));
      }
    }
#pragma unroll
    for (int s = 0; s < G::row_slots; ++s) dst.data[i][s] = G::across_row_lanes(acc[s], op);
  }
}

template <class T, int R, int C, class L, class Op>
TT_DEVICE void reduce_cols(rv<C, per_col, L>& dst, const rt<T, R, C, L>& src, Op op, float init) {
  using G = geom<L>;
#pragma unroll
  for (int j = 0; j < C / base_side; ++j) {
    float acc[G::col_slots];
#pragma unroll
    for (int s = 0; s < G::col_slots; ++s) acc[s] = init;
#pragma unroll
    for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e) {
        acc[G::col_slot(e)] = op(acc[G::col_slot(e)], get(src.tiles[i][j], e));
      }
    }
#pragma unroll
    for (int s = 0; s < G::col_slots; ++s) dst.data[j][s] = G::across_col_lanes(acc[s], op);
  }
}

template <class T, int R, int C, class L>
TT_DEVICE void row_max(rv<R, per_row, L>& dst, const rt<T, R, C, L>& src) {
  reduce_rows(dst, src, max_op{}, TT_LOWEST);
}
template <class T, int R, int C, class L>
TT_DEVICE void row_sum(rv<R, per_row, L>& dst, const rt<T, R, C, L>& src) {
  reduce_rows(dst, src, sum_op{}, 0.0f);
}
template <class T, int R, int C, class L>
TT_DEVICE void col_max(rv<C, per_col, L>& dst, const rt<T, R, C, L>& src) {
  reduce_cols(dst, src, max_op{}, TT_LOWEST);
}
template <class T, int R, int C, class L>
TT_DEVICE void col_sum(rv<C, per_col, L>& dst, const rt<T, R, C, L>& src) {
  reduce_cols(dst, src, sum_op{}, 0.0f);
}

}  // namespace tt

#endif
