// Shared pieces of the row-wise host kernels (softmax, rmsnorm, layernorm):
// rows are handed out in tasks of rows_per_task, and reductions along a row
// keep V independent partial results so the compiler can vectorize them
// without reassociating floating-point sums itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tt/host/abi.h"
#include "tt/host/parallel.h"

namespace tt {

// Lanes of the straightforward (baseline) row kernels' reductions: one
// 512-bit register of floats, two on AVX2. A plain `sum += x` loop is not
// vectorised without -ffast-math: GCC adds element by element in order.
constexpr int64_t kBaselineLanes = 16;

// Args is the op's launch ABI struct: every row op's has x, y, rows and
// cols; a row reduction's also ldx, ldy and prologue_out.

// Runs fn(row) for every row, rows_per_task rows per task over Cfg::threads.
template <class Cfg, class Args, class F>
void for_each_row(const Args* args, const F& fn) {
  const int64_t rows = args->rows, per_task = Cfg::rows_per_task;
  tt::parallel_tasks(Cfg::threads, (rows + per_task - 1) / per_task, [&](int64_t task) {
    const int64_t end = std::min(rows, (task + 1) * per_task);
    for (int64_t row = task * per_task; row < end; ++row) fn(row);
  });
}

// The input row `row` of a row op: x itself, or x mapped through the
// prologue (scale, mask, residual add...) into a per-thread staging row, so
// every pass of the op reads finished values while the row stays in cache.
// Where the key wants the mapped row as an output too (Cfg::prologue_out:
// args->prologue_out, laid out like y), it is staged there.
template <class Cfg, class Args, class Pro>
inline const float* row_input(const Args* args, const Pro& pro, int64_t row) {
  const float* x = floats(args->x) + row * args->ldx;
  if constexpr (Pro::empty) {
    return x;
  } else {
    thread_local std::vector<float> scratch;
    float* staged = nullptr;
    if (Cfg::prologue_out) {
      staged = floats(args->prologue_out) + row * args->ldy;
    } else {
      scratch.resize(static_cast<size_t>(args->cols));
      staged = scratch.data();
    }
    for (int64_t c = 0; c < args->cols; ++c) staged[c] = pro(x[c], row * args->ldx + c, c);
    return staged;
  }
}

// Sum over j in [0, n) of f(j), in V lanes.
template <int64_t V, class F>
inline float lane_sum(int64_t n, const F& f) {
  float acc[V] = {};
  int64_t j = 0;
  for (; j + V <= n; j += V) {
    for (int64_t l = 0; l < V; ++l) acc[l] += f(j + l);
  }
  float sum = 0.0f;
  for (int64_t l = 0; l < V; ++l) sum += acc[l];
  for (; j < n; ++j) sum += f(j);
  return sum;
}

// V floats as one GCC vector: for reductions the vectorizer will not form
// from plain loops (a max without -ffinite-math-only).
template <int64_t V>
struct lane_vector {
  typedef float type __attribute__((vector_size(V * sizeof(float))));
};

// max over x[0, n), in V lanes.
template <int64_t V>
inline float lane_max(const float* x, int64_t n) {
  using vec = typename lane_vector<V>::type;
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  vec m = vec{} + kLowest;
  int64_t j = 0;
  for (; j + V <= n; j += V) {
    vec v;
    std::memcpy(&v, x + j, sizeof v);
    m = v > m ? v : m;
  }
  float max = kLowest;
  for (int64_t l = 0; l < V; ++l) max = std::max(max, m[l]);
  for (; j < n; ++j) max = std::max(max, x[j]);
  return max;
}

}  // namespace tt
