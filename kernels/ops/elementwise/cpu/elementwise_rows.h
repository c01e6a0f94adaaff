// Host element-wise kernel: y = epilogue(prologue(x)), element by element;
// what the fusion planner emits for a chain with no matmul or reduction.
#pragma once

#include <cstdint>

#include "tt/host/rows.h"

namespace tt {

// Cfg: rows_per_task, threads.
template <class Cfg, class Pro, class Epi>
int elementwise_rows(const tt_host_args* args, const Pro& pro, const Epi& epi) {
  const int64_t n = args->n;
  tt::for_each_row<Cfg>(args, [&](int64_t row) {
    const float* x = args->a + row * args->lda;
    float* y = args->out + row * args->ldc;
    const int64_t base = row * args->ldc;
    for (int64_t c = 0; c < n; ++c) y[c] = epi(pro(x[c], base + c, c), base + c, c);
  });
  return 0;
}

// The straightforward kernel: one flat single-threaded loop per functor over
// the whole tensor.
template <class Cfg, class Pro, class Epi>
int elementwise_naive(const tt_host_args* args, const Pro& pro, const Epi& epi) {
  const int64_t total = args->m * args->n;
  for (int64_t i = 0; i < total; ++i) args->out[i] = pro(args->a[i], i, i % args->n);
  for (int64_t i = 0; i < total; ++i) args->out[i] = epi(args->out[i], i, i % args->n);
  return 0;
}

}  // namespace tt
