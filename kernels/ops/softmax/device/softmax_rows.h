// GPU row softmax: y = epilogue(exp(x - max(x)) / sum(exp(x - max(x)))),
// accumulating in f32.
#ifndef TILETUNE_SOFTMAX_H
#define TILETUNE_SOFTMAX_H

#include "ops/softmax/softmax_args.h"
#include "tt/rows.h"

namespace tt {

// Cfg: x_type, y_type, threads, rows_per_block, vec, unroll, one_pass (see tt/rows.h). The
// first pass keeps, per thread, a running max m and the sum s of exp(x - m),
// rescaled as m grows (online softmax), so a long row is read twice, not
// three times; the second pass writes.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void softmax_rows(const tt_softmax_args& args, const Pro& pro, const Epi& epi) {
  typedef row_tile<Cfg> tile_t;
  __shared__ float scratch[Cfg::rows_per_block][tile_t::warps];
  for_each_row<Cfg>(args, [&](long long row, long long len, int t, int group) {
    const auto x = input_row<Cfg>(args, row, pro);
    const auto y = output_row<Cfg>(args, row);
    float* cache = row_cache<Cfg, tile_t>(args, group);
    tile_t tile;
    float m = TT_LOWEST, s = 0.0f;
    row_pass(tile, x, cache, len, t, false, [&](long long c0) {
      float next = m;
      tile.for_each(c0, len, t, [&](float v, long long) { next = fmaxf(next, v); });
      s *= fast_exp(m - next);
      tile.for_each(c0, len, t, [&](float v, long long) { s += fast_exp(v - next); });
      m = next;
    });
    const float row_max = group_reduce<tile_t::G>(m, max_reduce(), scratch[group]);
    const float sum =
        group_reduce<tile_t::G>(s * fast_exp(m - row_max), sum_reduce(), scratch[group]);
    const float inv = 1.0f / sum;
    const long long base = row * args.ldy;
    row_pass(tile, x, cache, len, t, true, [&](long long c0) {
      tile.write(y, c0, len, t, [&](fvec<tile_t::V>& out, const fvec<tile_t::V>& in, long long c) {
#pragma unroll
        for (int l = 0; l < tile_t::V; ++l) {
          out.x[l] = epi(fast_exp(in.x[l] - row_max) * inv, base + c + l, c + l);
        }
      });
    });
  });
}

// The straightforward kernel: one block per row, one element per thread
// per step, separate max, sum and write passes over global memory, expf.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void softmax_naive(const tt_softmax_args& args, const Pro& pro, const Epi& epi) {
  __shared__ float scratch[Cfg::threads / TT_WARP_SIZE];
  const long long n = args.cols;
  for (long long row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const auto x = input_row<Cfg>(args, row, pro);
    const auto y = output_row<Cfg>(args, row);
    float m = TT_LOWEST;
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      const float v = x[c];
      x.keep_one(c, v);
      m = fmaxf(m, v);
    }
    m = group_reduce<Cfg::threads>(m, max_reduce(), scratch);
    float s = 0.0f;
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) s += expf(x[c] - m);
    s = group_reduce<Cfg::threads>(s, sum_reduce(), scratch);
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      store_one(y, c, epi(expf(x[c] - m) / s, row * args.ldy + c, c));
    }
  }
}

}  // namespace tt

#endif
