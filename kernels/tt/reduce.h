// Reductions across the lanes of a warp and across a group of warps that
// shares one row: shuffles inside a warp, one shared-memory slot per warp
// between them.
#ifndef TILETUNE_TT_REDUCE_H
#define TILETUNE_TT_REDUCE_H

#include "tt/device.h"

namespace tt {

struct sum_reduce {
  TT_DEVICE static float identity() { return 0.0f; }
  TT_DEVICE float operator()(float a, float b) const { return a + b; }
};

struct max_reduce {
  TT_DEVICE static float identity() { return TT_LOWEST; }
  TT_DEVICE float operator()(float a, float b) const { return fmaxf(a, b); }
};

// v reduced over the lanes of this warp; every lane gets the result.
template <class Op>
TT_DEVICE float warp_reduce(float v, Op op) {
#pragma unroll
  for (int mask = TT_WARP_SIZE / 2; mask > 0; mask /= 2) v = op(v, shfl_xor(v, mask));
  return v;
}

// v reduced over a group of G threads (G a multiple of the warp size; the
// group's warps consecutive in the block); every thread of the group gets
// the result. `scratch` holds G / TT_WARP_SIZE floats of this group's own.
// It synchronizes the block when a group spans several warps, so every
// thread of the block must call it, the same number of times.
template <int G, class Op>
TT_DEVICE float group_reduce(float v, Op op, float* scratch) {
  static_assert(G % TT_WARP_SIZE == 0, "a group is whole warps");
  constexpr int kWarps = G / TT_WARP_SIZE;
  v = warp_reduce(v, op);
  if (kWarps == 1) return v;
  const int lane = threadIdx.x % TT_WARP_SIZE;
  if (lane == 0) scratch[(threadIdx.x % G) / TT_WARP_SIZE] = v;
  __syncthreads();
  v = lane < kWarps ? scratch[lane] : Op::identity();
  // The next reduction reuses scratch: everyone must have read it first.
  __syncthreads();
  return warp_reduce(v, op);
}

}  // namespace tt

#endif
