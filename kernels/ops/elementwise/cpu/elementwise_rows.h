// Host element-wise kernel: y = epilogue(prologue(x)), element by element;
// what the fusion planner emits for a chain with no matmul or reduction.
#pragma once

#include <cstdint>

#include "ops/elementwise/elementwise_args.h"
#include "tt/host/rows.h"

namespace tt {

// Cfg: rows_per_task, threads.
template <class Cfg, class Pro, class Epi>
int elementwise_rows(const tt_elementwise_args* args, const Pro& pro, const Epi& epi) {
  const int64_t n = args->cols;
  tt::for_each_row<Cfg>(args, [&](int64_t row) {
    // x and y are dense: elementwise's ABI has no row strides.
    const int64_t base = row * n;
    const float* x = floats(args->x) + base;
    float* y = floats(args->y) + base;
    for (int64_t c = 0; c < n; ++c) y[c] = epi(pro(x[c], base + c, c), base + c, c);
  });
  return 0;
}

// The straightforward kernel: one flat single-threaded loop per functor over
// the whole tensor.
template <class Cfg, class Pro, class Epi>
int elementwise_naive(const tt_elementwise_args* args, const Pro& pro, const Epi& epi) {
  const int64_t total = args->rows * args->cols;
  for (int64_t i = 0; i < total; ++i)
    floats(args->y)[i] = pro(floats(args->x)[i], i, i % args->cols);
  for (int64_t i = 0; i < total; ++i)
    floats(args->y)[i] = epi(floats(args->y)[i], i, i % args->cols);
  return 0;
}

}  // namespace tt
