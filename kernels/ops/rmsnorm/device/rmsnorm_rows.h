// GPU RMS norm: y = epilogue(x / sqrt(mean(x^2) + eps) * weight), per row,
// accumulating in f32.
#ifndef TILETUNE_RMSNORM_H
#define TILETUNE_RMSNORM_H

#include "ops/rmsnorm/rmsnorm_args.h"
#include "tt/rows.h"

namespace tt {

// Cfg: x_type, y_type, threads, rows_per_block, vec, unroll, one_pass (see tt/rows.h). A
// sum-of-squares pass, then a pass that scales and writes.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void rmsnorm_rows(const tt_rmsnorm_args& args, const Pro& pro, const Epi& epi) {
  typedef row_tile<Cfg> tile_t;
  __shared__ float scratch[Cfg::rows_per_block][tile_t::warps];
  const auto* weight = static_cast<const typename Cfg::x_type*>(args.w);
  for_each_row<Cfg>(args, [&](long long row, long long len, int t, int group) {
    const auto x = input_row<Cfg>(args, row, pro);
    const auto y = output_row<Cfg>(args, row);
    float* cache = row_cache<Cfg, tile_t>(args, group);
    tile_t tile;
    float squares = 0.0f;
    row_pass(tile, x, cache, len, t, false, [&](long long c0) {
      tile.for_each(c0, len, t, [&](float v, long long) { squares += v * v; });
    });
    squares = group_reduce<tile_t::G>(squares, sum_reduce(), scratch[group]);
    const float inv = rsqrtf(squares / static_cast<float>(args.cols) + args.eps);
    const long long base = row * args.ldy;
    row_pass(tile, x, cache, len, t, true, [&](long long c0) {
      tile.write(y, c0, len, t, [&](fvec<tile_t::V>& out, const fvec<tile_t::V>& in, long long c) {
        fvec<tile_t::V> w;
        load(w, weight + c);
#pragma unroll
        for (int l = 0; l < tile_t::V; ++l) {
          out.x[l] = epi(in.x[l] * inv * w.x[l], base + c + l, c + l);
        }
      });
    });
  });
}

// The straightforward kernel: one block per row, one element per thread per
// step, a sum-of-squares pass and a write pass over global memory.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void rmsnorm_naive(const tt_rmsnorm_args& args, const Pro& pro, const Epi& epi) {
  __shared__ float scratch[Cfg::threads / TT_WARP_SIZE];
  const auto* weight = static_cast<const typename Cfg::x_type*>(args.w);
  const long long n = args.cols;
  for (long long row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const auto x = input_row<Cfg>(args, row, pro);
    const auto y = output_row<Cfg>(args, row);
    float squares = 0.0f;
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      const float v = x[c];
      x.keep_one(c, v);
      squares += v * v;
    }
    squares = group_reduce<Cfg::threads>(squares, sum_reduce(), scratch);
    const float rms = sqrtf(squares / static_cast<float>(n) + args.eps);
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      store_one(y, c, epi(x[c] / rms * load_one(weight, c), row * args.ldy + c, c));
    }
  }
}

}  // namespace tt

#endif
