// Host row softmax: y = epilogue(exp(x - max(x)) / sum(exp(x - max(x)))),
// one row at a time, accumulating in f32.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/softmax/softmax_args.h"
#include "tt/host/math.h"
#include "tt/host/rows.h"

namespace tt {

// Cfg: vec (lanes of the reductions), online (1: max and sum in one read of
// the row, rescaling the sum as the max grows; 0: a max pass, then a pass
// storing exp(x - max) and summing it), fast_exp (1: the
// vectorizable exp of tt/host/math.h, 0: std::exp), rows_per_task, threads.
template <class Cfg, class Pro, class Epi>
int softmax_rows(const tt_softmax_args* args, const Pro& pro, const Epi& epi) {
  constexpr int64_t V = Cfg::vec;
  constexpr bool kFast = Cfg::fast_exp != 0;
  const int64_t n = args->cols;
  tt::for_each_row<Cfg>(args, [&](int64_t row) {
    const float* x = tt::row_input<Cfg>(args, pro, row);
    float* y = floats(args->y) + row * args->ldy;
    float max = std::numeric_limits<float>::lowest();
    float sum = 0.0f;
    if constexpr (Cfg::online != 0) {
      // Per lane: running max m and sum s of exp(x - m), rescaled when m grows.
      float m[V], s[V] = {};
      std::fill(m, m + V, std::numeric_limits<float>::lowest());
      int64_t j = 0;
      for (; j + V <= n; j += V) {
        for (int64_t l = 0; l < V; ++l) {
          const float next = std::max(m[l], x[j + l]);
          s[l] = s[l] * exp_of<kFast>(m[l] - next) + exp_of<kFast>(x[j + l] - next);
          m[l] = next;
        }
      }
      for (; j < n; ++j) {
        const float next = std::max(m[0], x[j]);
        s[0] = s[0] * exp_of<kFast>(m[0] - next) + exp_of<kFast>(x[j] - next);
        m[0] = next;
      }
      for (int64_t l = 0; l < V; ++l) max = std::max(max, m[l]);
      for (int64_t l = 0; l < V; ++l) sum += s[l] * exp_of<kFast>(m[l] - max);
      const float inv = 1.0f / sum;
      for (int64_t c = 0; c < n; ++c) {
        y[c] = epi(exp_of<kFast>(x[c] - max) * inv, row * args->ldy + c, c);
      }
    } else {
      max = lane_max<V>(x, n);
      // Keep exp(x - max) in y so the last pass only scales it.
      sum = lane_sum<V>(n, [&](int64_t c) { return y[c] = exp_of<kFast>(x[c] - max); });
      const float inv = 1.0f / sum;
      for (int64_t c = 0; c < n; ++c) y[c] = epi(y[c] * inv, row * args->ldy + c, c);
    }
  });
  return 0;
}

// The straightforward kernel, vectorised: max, sum and write passes over
// each row (the reductions in kBaselineLanes lanes, the exp vectorisable),
// rows one after another on one thread.
template <class Cfg, class Pro, class Epi>
int softmax_naive(const tt_softmax_args* args, const Pro& pro, const Epi& epi) {
  const int64_t n = args->cols;
  for (int64_t row = 0; row < args->rows; ++row) {
    const float* x = tt::row_input<Cfg>(args, pro, row);
    float* y = floats(args->y) + row * args->ldy;
    const float max = lane_max<kBaselineLanes>(x, n);
    const float sum = lane_sum<kBaselineLanes>(n, [&](int64_t c) { return fast_exp(x[c] - max); });
    for (int64_t c = 0; c < n; ++c) y[c] = epi(fast_exp(x[c] - max) / sum, row * args->ldy + c, c);
  }
  return 0;
}

}  // namespace tt
