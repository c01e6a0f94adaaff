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

// The straightforward kernel: one single-threaded pass per functor over the
// whole tensor, row by row (a column index without a division per element
// keeps the loops vectorisable).
template <class Cfg, class Pro, class Epi>
int elementwise_naive(const tt_elementwise_args* args, const Pro& pro, const Epi& epi) {
  const int64_t n = args->cols;
  const float* x = floats(args->x);
  float* y = floats(args->y);
  for (int64_t base = 0; base < args->rows * n; base += n) {
    for (int64_t c = 0; c < n; ++c) y[base + c] = pro(x[base + c], base + c, c);
  }
  for (int64_t base = 0; base < args->rows * n; base += n) {
    for (int64_t c = 0; c < n; ++c) y[base + c] = epi(y[base + c], base + c, c);
  }
  return 0;
}

}  // namespace tt
