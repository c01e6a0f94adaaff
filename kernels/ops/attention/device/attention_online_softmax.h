// The online softmax of the attention kernels, on one warp's 16 rows of
// scores in the accumulator layout (rt<float, 16, N, row_l>): running max
// m (in units of c = scale * log2(e), so exp(scale (s - max)) = 2^(c s -
// m)) and this lane's share of the running sum l, per row slot. Keys
// hidden by the mask are -inf scores; a row that has seen only those keeps
// m = -inf, and its p, l and O stay 0 rather than NaN.
#ifndef TILETUNE_TT_ATTENTION_ONLINE_SOFTMAX_H
#define TILETUNE_TT_ATTENTION_ONLINE_SOFTMAX_H

#include "tt/tile.h"

namespace tt::attention {

using G = geom<row_l>;

TT_DEVICE float negative_infinity() {
  return -__int_as_float(0x7f800000);
}

// Scores whose (row, column) inside the tile `hidden` says are -inf.
template <int N, class Hidden>
TT_DEVICE void mask(rt<float, 16, N, row_l>& s, Hidden hidden) {
  const int lane = arch::lane_id();
#pragma unroll
  for (int j = 0; j < N / 16; ++j) {
#pragma unroll
    for (int e = 0; e < arch::frag::elems; ++e) {
      if (hidden(G::row(lane, e), 16 * j + G::col(lane, e))) {
        s.tiles[0][j].data[e] = negative_infinity();
      }
    }
  }
}

// s += mask * unscale: the additive mask tensor in the units of s (1 /
// scale where online_softmax scales s by c = scale log2(e) later, so the
// softmax sees scale s + mask; log2(e) where s already holds scaled base-2
// scores). mask_row[i][r] is the mask row of row slot r of the tile's i-th
// 16 rows at the tile's first key, null for a row past the query rows;
// keys at key0 + column >= kv_len are left alone (the kv_len mask hides
// them).
template <class T, int R, int N>
TT_DEVICE void add_mask(rt<float, R, N, row_l>& s, const T* const (&mask_row)[R / 16][G::row_slots],
                        long long key0, long long kv_len, float unscale) {
  const int lane = arch::lane_id();
#pragma unroll
  for (int i = 0; i < R / 16; ++i)
#pragma unroll
    for (int j = 0; j < N / 16; ++j)
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e) {
        const int col = 16 * j + G::col(lane, e);
        const T* row = mask_row[i][G::row_slot(e)];
        if (row != nullptr && key0 + col < kv_len) {
          s.tiles[i][j].data[e] += arch::to_float(row[col]) * unscale;
        }
      }
}

// Folds the scores s of one key block into (m, l) and turns s into p =
// 2^(c s - m). rescale[r] is what O's rows of slot r must be multiplied by
// before p V is added. c > 0 (the op's scale is positive).
template <int N>
TT_DEVICE void online_softmax(rt<float, 16, N, row_l>& s, float (&m)[G::row_slots],
                              float (&l)[G::row_slots], float c, float (&rescale)[G::row_slots]) {
#pragma unroll
  for (int r = 0; r < G::row_slots; ++r) {
    float mx = negative_infinity();
#pragma unroll
    for (int j = 0; j < N / 16; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e) {
        if (G::row_slot(e) == r) mx = fmaxf(mx, s.tiles[0][j].data[e]);
      }
    }
    mx = G::across_row_lanes(mx, max_op{});
    const float m_new = fmaxf(m[r], mx * c);
    const float m_use = m_new == negative_infinity() ? 0.0f : m_new;
    rescale[r] = arch::exp2_approx(m[r] - m_use);
    m[r] = m_new;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < N / 16; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e) {
        if (G::row_slot(e) == r) {
          const float p = arch::exp2_approx(fmaf(s.tiles[0][j].data[e], c, -m_use));
          s.tiles[0][j].data[e] = p;
          sum += p;
        }
      }
    }
    // This lane's share: the quad's lanes are summed once, at the end.
    l[r] = l[r] * rescale[r] + sum;
  }
}

// O's rows of slot r times rescale[r].
template <int N>
TT_DEVICE void scale_rows(rt<float, 16, N, row_l>& o, const float (&rescale)[G::row_slots]) {
#pragma unroll
  for (int j = 0; j < N / 16; ++j) {
#pragma unroll
    for (int e = 0; e < arch::frag::elems; ++e) o.tiles[0][j].data[e] *= rescale[G::row_slot(e)];
  }
}

// The row's log-sum-exp in natural log from its max m (units of c) and
// its whole sum l: ln(l) + m ln 2; -inf for a row that saw no key.
TT_DEVICE float log_sum_exp(float m, float l) {
  return l > 0.0f ? (__log2f(l) + m) * 0.6931471805599453f : negative_infinity();
}

}  // namespace tt::attention

#endif
