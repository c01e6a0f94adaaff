// Loads and stores between the GPU kernels' f32 registers and memory of any
// element type of the tile library (float, tt::bf16, tt::f16): 16-bit
// elements widen to f32 as they arrive and round to nearest even as they
// leave, so a kernel computes and accumulates in f32 whatever it reads and
// writes. A vector load or store moves its V elements in one instruction
// (V * 2 bytes for 16-bit types); the pointer must be aligned alike.
#ifndef TILETUNE_TT_TYPED_MEMORY_H
#define TILETUNE_TT_TYPED_MEMORY_H

#include "tt/tile.h"

namespace tt {

template <class T, int V>
struct alignas(sizeof(T) * V) packed {
  T x[V];
};

// More general than tt/device.h's float overloads, which float pointers take.
template <int V, class T>
TT_DEVICE void load(fvec<V>& dst, const T* src) {
  const packed<T, V> p = *reinterpret_cast<const packed<T, V>*>(src);
#pragma unroll
  for (int l = 0; l < V; ++l) dst.x[l] = arch::to_float(p.x[l]);
}

template <int V, class T>
TT_DEVICE void store(T* dst, const fvec<V>& src) {
  packed<T, V> p;
#pragma unroll
  for (int l = 0; l < V; ++l) p.x[l] = arch::convert<T>::from(src.x[l]);
  *reinterpret_cast<packed<T, V>*>(dst) = p;
}

// One element, for the straightforward kernels and ragged ends.
template <class T>
TT_DEVICE float load_one(const T* src, long long i) {
  return arch::to_float(src[i]);
}

template <class T>
TT_DEVICE void store_one(T* dst, long long i, float v) {
  dst[i] = arch::convert<T>::from(v);
}

}  // namespace tt

#endif
