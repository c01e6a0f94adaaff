// Warp-level matrix multiply-accumulate on register tiles, d = a * b + c
// in every transposition. All four reduce to the leaf's one base step,
// acc += a * b^T with both operands in row layout, because a col_l base
// tile is the row_l base tile of its transpose, register for register. A
// leaf whose MMA step takes twice a base tile's k (arch::mma_k 32 on 16x16
// base tiles) runs pairs of base tiles.
#ifndef TILETUNE_TT_TILE_MMA_H
#define TILETUNE_TT_TILE_MMA_H

#include "tt/tile_types.h"

namespace tt {
namespace arch {
// A leaf with mma_k = 2 * base_side specialises it: pair(acc, a0, a1, b0, b1).
template <class T>
struct mma_pair_op;
}  // namespace arch
namespace detail {

// d = c, then d += sum over k of A(i, k) * Bt(j, k)^T, where a_base(i, k)
// and bt_base(j, k) pick the base tiles in row layout.
template <class T, int M, int N, int K, class ABase, class BtBase>
TT_DEVICE void mma(rt<float, M, N, row_l>& d, const rt<float, M, N, row_l>& c, ABase a_base,
                   BtBase bt_base) {
  if (&d != &c) d = c;
  constexpr int side = base_side;
  if constexpr (arch::mma_k == 2 * side && K % (2 * side) == 0) {
#pragma unroll
    for (int k = 0; k < K / side; k += 2) {
#pragma unroll
      for (int i = 0; i < M / side; ++i) {
#pragma unroll
        for (int j = 0; j < N / side; ++j) {
          arch::mma_pair_op<T>::pair(d.tiles[i][j].data, a_base(i, k).data, a_base(i, k + 1).data,
                                     bt_base(j, k).data, bt_base(j, k + 1).data);
        }
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < K / side; ++k) {
#pragma unroll
      for (int i = 0; i < M / side; ++i) {
#pragma unroll
        for (int j = 0; j < N / side; ++j) {
          arch::mma_op<T>::base(d.tiles[i][j].data, a_base(i, k).data, bt_base(j, k).data);
        }
      }
    }
  }
}

}  // namespace detail

// d = a * b + c: a is M x K, b is K x N.
template <class T, int M, int N, int K>
TT_DEVICE void mma_AB(rt<float, M, N, row_l>& d, const rt<T, M, K, row_l>& a,
                      const rt<T, K, N, col_l>& b, const rt<float, M, N, row_l>& c) {
  detail::mma<T, M, N, K>(
      d, c, [&](int i, int k) -> const rt_base<T>& { return a.tiles[i][k]; },
      [&](int j, int k) -> const rt_base<T>& { return b.tiles[k][j]; });
}

// d = a * b^T + c: a is M x K, b is N x K.
template <class T, int M, int N, int K>
TT_DEVICE void mma_ABt(rt<float, M, N, row_l>& d, const rt<T, M, K, row_l>& a,
                       const rt<T, N, K, row_l>& b, const rt<float, M, N, row_l>& c) {
  detail::mma<T, M, N, K>(
      d, c, [&](int i, int k) -> const rt_base<T>& { return a.tiles[i][k]; },
      [&](int j, int k) -> const rt_base<T>& { return b.tiles[j][k]; });
}

// d = a^T * b + c: a is K x M, b is K x N.
template <class T, int M, int N, int K>
TT_DEVICE void mma_AtB(rt<float, M, N, row_l>& d, const rt<T, K, M, col_l>& a,
                       const rt<T, K, N, col_l>& b, const rt<float, M, N, row_l>& c) {
  detail::mma<T, M, N, K>(
      d, c, [&](int i, int k) -> const rt_base<T>& { return a.tiles[k][i]; },
      [&](int j, int k) -> const rt_base<T>& { return b.tiles[k][j]; });
}

// d = a^T * b^T + c: a is K x M, b is N x K.
template <class T, int M, int N, int K>
TT_DEVICE void mma_AtBt(rt<float, M, N, row_l>& d, const rt<T, K, M, col_l>& a,
                        const rt<T, N, K, row_l>& b, const rt<float, M, N, row_l>& c) {
  detail::mma<T, M, N, K>(
      d, c, [&](int i, int k) -> const rt_base<T>& { return a.tiles[k][i]; },
      [&](int j, int k) -> const rt_base<T>& { return b.tiles[j][k]; });
}

}  // namespace tt

#endif
