// Host RMS norm: y = epilogue(x / sqrt(mean(x^2) + eps) * weight), per row.
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/rmsnorm/rmsnorm_args.h"
#include "tt/host/rows.h"

namespace tt {

// Cfg: vec (lanes of the sum of squares), rows_per_task, threads.
template <class Cfg, class Pro, class Epi>
int rmsnorm_rows(const tt_rmsnorm_args* args, const Pro& pro, const Epi& epi) {
  const int64_t n = args->cols;
  tt::for_each_row<Cfg>(args, [&](int64_t row) {
    const float* x = tt::row_input<Cfg>(args, pro, row);
    float* y = floats(args->y) + row * args->ldy;
    const float squares = lane_sum<Cfg::vec>(n, [&](int64_t c) { return x[c] * x[c]; });
    const float inv = 1.0f / std::sqrt(squares / static_cast<float>(n) + args->eps);
    for (int64_t c = 0; c < n; ++c) {
      y[c] = epi(x[c] * inv * floats(args->w)[c], row * args->ldy + c, c);
    }
  });
  return 0;
}

// The straightforward kernel, vectorised: the sum of squares in
// kBaselineLanes lanes, then the write pass, rows one after another on one
// thread.
template <class Cfg, class Pro, class Epi>
int rmsnorm_naive(const tt_rmsnorm_args* args, const Pro& pro, const Epi& epi) {
  for (int64_t row = 0; row < args->rows; ++row) {
    const float* x = tt::row_input<Cfg>(args, pro, row);
    float* y = floats(args->y) + row * args->ldy;
    const float squares =
        lane_sum<kBaselineLanes>(args->cols, [&](int64_t c) { return x[c] * x[c]; });
    const float rms = std::sqrt(squares / static_cast<float>(args->cols) + args->eps);
    for (int64_t c = 0; c < args->cols; ++c) {
      y[c] = epi(x[c] / rms * floats(args->w)[c], row * args->ldy + c, c);
    }
  }
  return 0;
}

}  // namespace tt
