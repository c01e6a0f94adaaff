// GPU element-wise kernel: y = epilogue(prologue(x)) over the whole tensor,
// what the fusion planner emits for ops with no matmul or reduction. A pure
// stream: its speed is the memory's, so it is tuned for full vector loads and
// enough bytes in flight per thread.
#ifndef TILETUNE_ELEMENTWISE_H
#define TILETUNE_ELEMENTWISE_H

#include "ops/elementwise/elementwise_args.h"
#include "tt/typed_memory.h"

namespace tt {

// Cfg: x_type, y_type (see tt/typed_memory.h), threads, vec (elements per
// load), unroll (vectors in flight per thread). Blocks stride over the tensor, so any grid covers
// it; the last partial vector is done one element at a time.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void elementwise_rows(const tt_elementwise_args& args, const Pro& pro, const Epi& epi) {
  constexpr int V = Cfg::vec, U = Cfg::unroll;
  const long long total = args.rows * args.cols, n = args.cols;
  const auto* x = static_cast<const typename Cfg::x_type*>(args.x);
  auto* y = static_cast<typename Cfg::y_type*>(args.y);
  const long long step = static_cast<long long>(gridDim.x) * Cfg::threads * V * U;
  for (long long first = (static_cast<long long>(blockIdx.x) * Cfg::threads * U + threadIdx.x) * V;
       first < total; first += step) {
    fvec<V> v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long i = first + static_cast<long long>(u) * Cfg::threads * V;
      if (i + V <= total) load(v[u], x + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long i = first + static_cast<long long>(u) * Cfg::threads * V;
      if (i + V <= total) {
#pragma unroll
        for (int l = 0; l < V; ++l) {
          const long long c = (i + l) % n;
          v[u].x[l] = epi(pro(v[u].x[l], i + l, c), i + l, c);
        }
        store(y + i, v[u]);
      } else {
        for (long long j = i; j < total; ++j) {
          store_one(y, j, epi(pro(load_one(x, j), j, j % n), j, j % n));
        }
      }
    }
  }
}

// The straightforward kernel: one element per thread.
template <class Cfg, class Pro, class Epi>
TT_DEVICE void elementwise_naive(const tt_elementwise_args& args, const Pro& pro, const Epi& epi) {
  const long long total = args.rows * args.cols;
  const auto* x = static_cast<const typename Cfg::x_type*>(args.x);
  auto* y = static_cast<typename Cfg::y_type*>(args.y);
  const long long step = static_cast<long long>(gridDim.x) * Cfg::threads;
  for (long long i = static_cast<long long>(blockIdx.x) * Cfg::threads + threadIdx.x; i < total;
       i += step) {
    store_one(y, i, epi(pro(load_one(x, i), i, i % args.cols), i, i % args.cols));
  }
}

}  // namespace tt

#endif
