// GPU layer norm: y = epilogue((x - mean) / sqrt(var + eps) * gamma + beta),
// per row, with the population variance, accumulating in f32.
#ifndef TILETUNE_LAYERNORM_H
#define TILETUNE_LAYERNORM_H

#include "ops/layernorm/layernorm_args.h"
#include "tt/rows.h"

namespace tt {

// Cfg: x_type, y_type, threads, rows_per_block, vec, unroll, one_pass (see tt/rows.h) and
// welford.
// welford = 0: a sum pass for the mean, a pass summing squared deviations
// from it, a write pass. welford = 1: each thread keeps the count, mean and
// sum of squared deviations of its own elements (Welford's update), merged
// across the group with Chan's formula, so a long row is read twice, not
// three times, at the price of a division per element.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void layernorm_rows(const tt_layernorm_args& args, const Pro& pro, const Epi& epi) {
  typedef row_tile<Cfg> tile_t;
  __shared__ float scratch[Cfg::rows_per_block][tile_t::warps];
  const auto* gamma = static_cast<const typename Cfg::x_type*>(args.w);
  const auto* beta = static_cast<const typename Cfg::x_type*>(args.b);
  const float n = static_cast<float>(args.cols);
  for_each_row<Cfg>(args, [&](long long row, long long len, int t, int group) {
    const auto x = input_row<Cfg>(args, row, pro);
    const auto y = output_row<Cfg>(args, row);
    float* red = scratch[group];
    float* cache = row_cache<Cfg, tile_t>(args, group);
    tile_t tile;
    float mean = 0.0f, deviations = 0.0f;
    if (Cfg::welford) {
      float count = 0.0f, mu = 0.0f, m2 = 0.0f;
      row_pass(tile, x, cache, len, t, false, [&](long long c0) {
        tile.for_each(c0, len, t, [&](float v, long long) {
          count += 1.0f;
          const float delta = v - mu;
          mu += delta / count;
          m2 += delta * (v - mu);
        });
      });
      mean = group_reduce<tile_t::G>(count * mu, sum_reduce(), red) / n;
      const float shift = mu - mean;
      deviations = group_reduce<tile_t::G>(m2 + count * shift * shift, sum_reduce(), red);
    } else {
      float sum = 0.0f;
      row_pass(tile, x, cache, len, t, false, [&](long long c0) {
        tile.for_each(c0, len, t, [&](float v, long long) { sum += v; });
      });
      mean = group_reduce<tile_t::G>(sum, sum_reduce(), red) / n;
      float squares = 0.0f;
      row_pass(tile, x, cache, len, t, true, [&](long long c0) {
        tile.for_each(c0, len, t, [&](float v, long long) { squares += (v - mean) * (v - mean); });
      });
      deviations = group_reduce<tile_t::G>(squares, sum_reduce(), red);
    }
    const float inv = rsqrtf(deviations / n + args.eps);
    const long long base = row * args.ldy;
    row_pass(tile, x, cache, len, t, true, [&](long long c0) {
      tile.write(y, c0, len, t, [&](fvec<tile_t::V>& out, const fvec<tile_t::V>& in, long long c) {
        fvec<tile_t::V> g, b;
        load(g, gamma + c);
        load(b, beta + c);
#pragma unroll
        for (int l = 0; l < tile_t::V; ++l) {
          out.x[l] = epi((in.x[l] - mean) * inv * g.x[l] + b.x[l], base + c + l, c + l);
        }
      });
    });
  });
}

// The straightforward kernel: one block per row, one element per thread per
// step, mean, variance and write passes over global memory.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void layernorm_naive(const tt_layernorm_args& args, const Pro& pro, const Epi& epi) {
  __shared__ float scratch[Cfg::threads / TT_WARP_SIZE];
  const auto* gamma = static_cast<const typename Cfg::x_type*>(args.w);
  const auto* beta = static_cast<const typename Cfg::x_type*>(args.b);
  const long long n = args.cols;
  for (long long row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const auto x = input_row<Cfg>(args, row, pro);
    const auto y = output_row<Cfg>(args, row);
    float sum = 0.0f;
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      const float v = x[c];
      x.keep_one(c, v);
      sum += v;
    }
    const float mean =
        group_reduce<Cfg::threads>(sum, sum_reduce(), scratch) / static_cast<float>(n);
    float squares = 0.0f;
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      squares += (x[c] - mean) * (x[c] - mean);
    }
    squares = group_reduce<Cfg::threads>(squares, sum_reduce(), scratch);
    const float stddev = sqrtf(squares / static_cast<float>(n) + args.eps);
    for (long long c = threadIdx.x; c < n; c += Cfg::threads) {
      store_one(y, c,
                epi((x[c] - mean) / stddev * load_one(gamma, c) + load_one(beta, c),
                    row * args.ldy + c, c));
    }
  }
}

}  // namespace tt

#endif
