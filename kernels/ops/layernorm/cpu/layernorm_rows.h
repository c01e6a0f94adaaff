// Host layer norm: y = epilogue((x - mean) / sqrt(var + eps) * gamma + beta),
// per row, with the population variance.
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/layernorm/layernorm_args.h"
#include "tt/host/rows.h"

namespace tt {

// Mean and sum of squared deviations of a row. Welford updates them in one
// read of the row (per lane, merged with Chan's formula); the two-pass form
// reads the row twice but does no division per element.
template <int64_t V, bool Welford>
inline void row_moments(const float* x, int64_t n, float* mean, float* m2) {
  if constexpr (Welford) {
    float mu[V] = {}, sq[V] = {};
    int64_t j = 0, count = 0;
    for (; j + V <= n; j += V) {
      ++count;
      const float inv = 1.0f / static_cast<float>(count);
      for (int64_t l = 0; l < V; ++l) {
        const float delta = x[j + l] - mu[l];
        mu[l] += delta * inv;
        sq[l] += delta * (x[j + l] - mu[l]);
      }
    }
    float total = 0.0f, m = 0.0f, s = 0.0f;
    const auto merge = [&](float count_b, float mean_b, float m2_b) {
      const float merged = total + count_b;
      const float delta = mean_b - m;
      m += delta * count_b / merged;
      s += m2_b + delta * delta * total * count_b / merged;
      total = merged;
    };
    if (count > 0) {
      for (int64_t l = 0; l < V; ++l) merge(static_cast<float>(count), mu[l], sq[l]);
    }
    for (; j < n; ++j) merge(1.0f, x[j], 0.0f);
    *mean = m;
    *m2 = s;
  } else {
    const float m = lane_sum<V>(n, [&](int64_t c) { return x[c]; }) / static_cast<float>(n);
    *mean = m;
    *m2 = lane_sum<V>(n, [&](int64_t c) { return (x[c] - m) * (x[c] - m); });
  }
}

// Cfg: vec (lanes of the reductions), welford (1: one-pass moments),
// rows_per_task, threads.
template <class Cfg, class Pro, class Epi>
int layernorm_rows(const tt_layernorm_args* args, const Pro& pro, const Epi& epi) {
  const int64_t n = args->cols;
  tt::for_each_row<Cfg>(args, [&](int64_t row) {
    const float* x = tt::row_input<Cfg>(args, pro, row);
    float* y = floats(args->y) + row * args->ldy;
    float mean = 0.0f, m2 = 0.0f;
    row_moments<Cfg::vec, Cfg::welford != 0>(x, n, &mean, &m2);
    const float inv = 1.0f / std::sqrt(m2 / static_cast<float>(n) + args->eps);
    for (int64_t c = 0; c < n; ++c) {
      y[c] = epi((x[c] - mean) * inv * floats(args->w)[c] + floats(args->b)[c], row * args->ldy + c,
                 c);
    }
  });
  return 0;
}

// The straightforward kernel, vectorised: mean, variance (two passes, in
// kBaselineLanes lanes) and write passes, rows one after another on one
// thread.
template <class Cfg, class Pro, class Epi>
int layernorm_naive(const tt_layernorm_args* args, const Pro& pro, const Epi& epi) {
  for (int64_t row = 0; row < args->rows; ++row) {
    const float* x = tt::row_input<Cfg>(args, pro, row);
    float* y = floats(args->y) + row * args->ldy;
    float mean = 0.0f, squares = 0.0f;
    row_moments<kBaselineLanes, false>(x, args->cols, &mean, &squares);
    const float stddev = std::sqrt(squares / static_cast<float>(args->cols) + args->eps);
    for (int64_t c = 0; c < args->cols; ++c) {
      y[c] = epi((x[c] - mean) / stddev * floats(args->w)[c] + floats(args->b)[c],
                 row * args->ldy + c, c);
    }
  }
  return 0;
}

}  // namespace tt
