// Shared pieces of the row-wise GPU kernels (softmax, rmsnorm, layernorm).
// A block of Cfg::threads threads works on Cfg::rows_per_block rows at a
// time, one group of G = threads / rows_per_block threads (whole warps) per
// row. A group walks its row in chunks of G * vec * unroll columns: each
// thread holds `unroll` vectors of `vec` elements of a chunk, consecutive
// threads holding consecutive vectors so that a warp's loads coalesce. A row
// that fits in one chunk is read once and stays in registers for the later
// passes of the op. A longer row is read again by each pass (multi-pass), or,
// with Cfg::one_pass, read once from memory and kept in shared memory for the
// later passes. Rows are Cfg::x_type (float, bf16, f16) in memory and f32 in
// registers and shared memory; outputs are Cfg::y_type. Args is the op's
// launch ABI struct: every row op's has x, y, rows and cols; a row
// reduction's also ldx, ldy and prologue_out.
#ifndef TILETUNE_TT_ROWS_H
#define TILETUNE_TT_ROWS_H

#include "tt/device.h"
#include "tt/reduce.h"
#include "tt/typed_memory.h"

namespace tt {

// One thread's share of one chunk of a row. vec > 1 needs every row start
// aligned to vec elements (cols a multiple of vec, aligned buffers).
template <class Cfg>
struct row_tile {
  static constexpr int G = Cfg::threads / Cfg::rows_per_block;
  static constexpr int V = Cfg::vec;
  static constexpr int U = Cfg::unroll;
  static constexpr int chunk = G * V * U;
  static constexpr int warps = G / TT_WARP_SIZE;
  static_assert(G % TT_WARP_SIZE == 0, "each row gets whole warps");

  fvec<V> v[U];

  // The column of v[u].x[0] in the chunk that starts at c0.
  TT_DEVICE static long long col(long long c0, int u, int t) {
    return c0 + static_cast<long long>(u * G + t) * V;
  }

  // v = this thread's vectors of the chunk of src at c0; a vector at or past
  // len keeps what it held (for_each and write skip it).
  template <class Src>
  TT_DEVICE void read(const Src& src, long long c0, long long len, int t) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long c = col(c0, u, t);
      if (c < len) src.load(v[u], c);
    }
  }

  // f(x, column) for each element of the chunk at c0 that is inside the row.
  template <class F>
  TT_DEVICE void for_each(long long c0, long long len, int t, F f) const {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long c = col(c0, u, t);
      if (c < len) {
#pragma unroll
        for (int l = 0; l < V; ++l) f(v[u].x[l], c + l);
      }
    }
  }

  // dst at each vector of the chunk at c0 inside the row = f(out, in, column
  // of its first element), one vector store each.
  template <class T, class F>
  TT_DEVICE void write(T* dst, long long c0, long long len, int t, F f) const {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long c = col(c0, u, t);
      if (c < len) {
        fvec<V> out;
        f(out, v[u], c);
        store(dst + c, out);
      }
    }
  }
};

// A row of the op's input as the op sees it: x mapped through the key's
// prologue (scale, mask, residual add...) as it is loaded, so the prologue
// costs no pass of its own. `base` is the row's first linear index. `keep`
// is where the key wants the mapped row written too (x + residual, the
// residual stream), or null.
template <class T, class Pro>
struct row_source {
  const T* x;
  long long base;
  Pro pro;
  T* keep;

  TT_DEVICE float operator[](long long c) const { return pro(load_one(x, c), base + c, c); }

  // Writes element c of the mapped row where the key wants it; the first
  // pass over a row calls this once per element.
  TT_DEVICE void keep_one(long long c, float v) const {
    if (keep) store_one(keep, c, v);
  }

  template <int V>
  TT_DEVICE void load(fvec<V>& v, long long c) const {
    tt::load(v, x + c);
#pragma unroll
    for (int l = 0; l < V; ++l) v.x[l] = pro(v.x[l], base + c + l, c + l);
  }
};

// A row kept in shared memory (f32, after the prologue) for the passes after
// the first.
struct shared_row {
  const float* p;

  template <int V>
  TT_DEVICE void load(fvec<V>& v, long long c) const {
    tt::load(v, p + c);
  }
};

// Where a one-pass kernel keeps its group's row when the row is longer than
// a chunk: the group's slice of the block's dynamic shared memory, which the
// launch sizes at rows_per_block * cols floats. Null for a row that fits in
// registers and for multi-pass kernels.
template <class Cfg, class Tile, class Args>
TT_DEVICE float* row_cache(const Args& args, int group) {
  extern __shared__ __attribute__((aligned(16))) float tt_row_cache[];
  if (!Cfg::one_pass || args.cols <= Tile::chunk) return nullptr;
  return tt_row_cache + group * args.cols;
}

// Row `row` of the op's input x, seen through the prologue, and where its
// mapped values go when the key wants them (Cfg::prologue_out:
// args.prologue_out, laid out like y).
template <class Cfg, class Args, class Pro>
TT_DEVICE row_source<typename Cfg::x_type, Pro> input_row(const Args& args, long long row,
                                                          const Pro& pro) {
  typedef typename Cfg::x_type T;
  return {static_cast<const T*>(args.x) + row * args.ldx, row * args.ldx, pro,
          Cfg::prologue_out ? static_cast<T*>(args.prologue_out) + row * args.ldy : nullptr};
}

// The first element of row `row` of the output y.
template <class Cfg, class Args>
TT_DEVICE typename Cfg::y_type* output_row(const Args& args, long long row) {
  return static_cast<typename Cfg::y_type*>(args.y) + row * args.ldy;
}

// Calls fn(row, len, t, group) for each row of this block's groups: `len`
// is the row's length, or 0 for a group past the last row (which still takes
// part in its block's reductions), t the thread's index in its group.
// Blocks stride over the rows, so any grid covers them all.
template <class Cfg, class Args, class F>
TT_DEVICE void for_each_row(const Args& args, F fn) {
  constexpr int G = Cfg::threads / Cfg::rows_per_block;
  const int group = threadIdx.x / G, t = threadIdx.x % G;
  const long long step = static_cast<long long>(gridDim.x) * Cfg::rows_per_block;
  for (long long first = static_cast<long long>(blockIdx.x) * Cfg::rows_per_block;
       first < args.rows; first += step) {
    const long long row = first + group;
    fn(row, row < args.rows ? args.cols : 0, t, group);
  }
}

// One pass over a row of len columns: for each chunk, tile = its part of the
// chunk, then f(chunk start). The first pass (no `reuse`) reads src, and
// writes what it read where src keeps it and into `cache` (row_cache). A
// later pass (`reuse`) reads nothing for a row that fits in one chunk (tile
// still holds it), reads `cache` where there is one, and src again otherwise.
// Each thread reads back only the vectors it wrote, so no barrier is needed.
template <class Tile, class Src, class F>
TT_DEVICE void row_pass(Tile& tile, const Src& src, float* cache, long long len, int t, bool reuse,
                        F f) {
  const auto copy = [](fvec<Tile::V>& out, const fvec<Tile::V>& in, long long) { out = in; };
  for (long long c0 = 0; c0 < len; c0 += Tile::chunk) {
    if (!reuse) {
      tile.read(src, c0, len, t);
      if (src.keep) tile.write(src.keep, c0, len, t, copy);
      if (cache) tile.write(cache, c0, len, t, copy);
    } else if (len > Tile::chunk) {
      if (cache) {
        tile.read(shared_row{cache}, c0, len, t);
      } else {
        tile.read(src, c0, len, t);
      }
    }
    f(c0);
  }
}

}  // namespace tt

#endif
