// Moving tiles: global -> shared (asynchronous, multi-stage), shared <->
// registers, registers -> global (through an element-wise functor, for
// fused epilogues). Destination first.
#ifndef TILETUNE_TT_TILE_MEMORY_H
#define TILETUNE_TT_TILE_MEMORY_H

#include "tt/tile_types.h"

namespace tt {

// ---- Global -> shared ----------------------------------------------------------

// Starts copying the R x C tile of `src` at (row0, col0) into `dst`, by the
// block's THREADS threads, in pieces of VEC elements (VEC * sizeof(T) bytes:
// src.ld and the tensor's base must be VEC-aligned; VEC = 1 is the path for
// any alignment). Elements outside src are zero-filled. Completes only after
// commit() and wait<>().
template <int THREADS, int VEC, class T, int R, int C>
TT_DEVICE void load_async(st<T, R, C>& dst, const gl<T>& src, long long row0, long long col0) {
  using S = st<T, R, C>;
  constexpr int chunks = R * S::row_chunks, per_chunk = S::chunk_elems;
  static_assert(per_chunk % VEC == 0, "VEC must divide a 16-byte chunk");
  constexpr int bytes = VEC * static_cast<int>(sizeof(T));
  // When the threads cover whole rows, a thread's chunks sit `rows_apart`
  // rows from each other in one column: one offset plus multiples of a
  // stride, and one swizzle when 8 divides rows_apart.
  constexpr bool whole_rows = THREADS % S::row_chunks == 0 && chunks % THREADS == 0;
  constexpr int rows_apart = THREADS / S::row_chunks;
  const int tid = static_cast<int>(threadIdx.x);
  char* base = reinterpret_cast<char*>(dst.data);
  // Offsets from the tile's corner fit 32 bits (a tile spans fewer than
  // 2^31 elements); so do the bounds, clamped to the tile.
  const T* tile = src.ptr + row0 * src.ld + col0;
  const int ld = static_cast<int>(src.ld);
  const int rows_left = src.rows - row0 < R ? static_cast<int>(src.rows - row0) : R;
  const int cols_left = src.cols - col0 < C ? static_cast<int>(src.cols - col0) : C;
  if (rows_left == R && cols_left == C) {
#if defined(TT_LDS_DIRECT)
    // Each wave's load fills 64 consecutive words of LDS, lane l the l-th:
    // the lane reads the word of the matrix that the swizzle puts there
    // (the swizzle moves whole 16-byte chunks, and with a half swap the
    // 8-byte halves inside them; both are XORs, their own inverses).
    constexpr int word_bytes = arch::lds_direct_bytes, chunk_words = 16 / word_bytes;
    constexpr int words = chunks * chunk_words;
    static_assert(word_bytes % static_cast<int>(sizeof(T)) == 0 && 16 % word_bytes == 0,
                  "a direct LDS word holds whole elements and divides a chunk");
    if constexpr (VEC == per_chunk && THREADS % arch::lanes == 0 && words % THREADS == 0) {
      const int wave = tid / arch::lanes, lane = tid % arch::lanes;
#pragma unroll
      for (int i = 0; i < words / THREADS; ++i) {
        const int first = (wave + i * (THREADS / arch::lanes)) * arch::lanes;
        const int w = first + lane, chunk = w / chunk_words, r = chunk / S::row_chunks;
        const int c =
            ((chunk % S::row_chunks) ^ S::swizzle_of(r)) * per_chunk +
            (((w % chunk_words) * word_bytes) ^ S::half_of(r)) / static_cast<int>(sizeof(T));
        arch::copy_word_to_lds(base + first * word_bytes, tile + (r * ld + c));
      }
      return;
    }
#endif
    // Inside the matrix (all tiles but the edges): no bounds at all.
#pragma unroll
    for (int i = 0; i < ceil_div(chunks, THREADS); ++i) {
      const int idx = tid + i * THREADS;
      if (chunks % THREADS != 0 && idx >= chunks) continue;
      const int r = whole_rows ? tid / S::row_chunks + i * rows_apart : idx / S::row_chunks;
      const int c = (whole_rows ? tid % S::row_chunks : idx % S::row_chunks) * per_chunk;
      // The chunk's place, and where its first half goes in it.
      const int half = S::half_of(r);
      char* chunk =
          (whole_rows && rows_apart % S::pattern_rows == 0
               ? base + S::byte_offset(tid / S::row_chunks, c) + i * rows_apart * S::row_bytes
               : base + S::byte_offset(r, c)) -
          half;
#if defined(TT_LDS_HALF_SWAP)
      if constexpr (bytes == 16) {
        arch::copy_chunk_halves(chunk, tile + (r * ld + c), half);
        continue;
      }
#endif
#pragma unroll
      for (int p = 0; p < per_chunk; p += VEC) {
        // Pieces of at most 8 bytes (or no swap) stay inside one half.
        arch::copy_async<bytes>(chunk + ((p * static_cast<int>(sizeof(T))) ^ half),
                                tile + (r * ld + c + p));
      }
    }
    return;
  }
  // Edge tiles copy pieces that never straddle a swapped half.
  constexpr int edge_vec = S::half_swap && bytes > 8 ? 8 / static_cast<int>(sizeof(T)) : VEC;
  constexpr int edge_bytes = edge_vec * static_cast<int>(sizeof(T));
#pragma unroll
  for (int i = 0; i < ceil_div(chunks, THREADS); ++i) {
    const int idx = tid + i * THREADS;
    if (chunks % THREADS != 0 && idx >= chunks) continue;
    const int r = idx / S::row_chunks, c = (idx % S::row_chunks) * per_chunk;
#pragma unroll
    for (int p = 0; p < per_chunk; p += edge_vec) {
      const int left = r < rows_left ? cols_left - (c + p) : 0;
      const int valid = left <= 0 ? 0 : (left >= edge_vec ? edge_vec : left);
      // A copy with nothing to read still needs an address: the tensor's start.
      arch::copy_async<edge_bytes>(base + S::byte_offset(r, c + p),
                                   valid > 0 ? tile + (r * ld + c + p) : src.ptr,
                                   valid * static_cast<int>(sizeof(T)));
    }
  }
}

// Closes the group of load_async calls since the last commit.
TT_DEVICE void commit() {
  arch::commit_async();
}
// Waits until at most N committed groups are in flight (this thread's);
// follow with sync() before reading what other threads copied.
template <int N>
TT_DEVICE void wait() {
  arch::wait_async<N>();
}
TT_DEVICE void sync() {
  __syncthreads();
}

// ---- Shared <-> registers ------------------------------------------------------

// Which operand of mma_* a register tile will be: loads place its registers
// for that use. The tile holds the same values either way; feeding it to
// the other operand costs register moves.
struct a_operand {};
struct b_operand {};

// dst = the R x C part of src at (row0, col0), one warp. 16-bit elements,
// or floats where the leaf has tf32 operands: rounded to tf32, their columns
// in the order the tensor cores read them (tt/arch/sm80_tf32_mma_sync.h), so such
// tiles feed mma_* only. row0 a multiple of 8 and col0 of 16.
template <class Use = a_operand, class T, int R, int C, class L, int SR, int SC>
TT_DEVICE void load(rt<T, R, C, L>& dst, const st<T, SR, SC>& src, int row0, int col0) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4,
                "shared -> register loads move 16-bit tiles or float (tf32) ones");
  constexpr bool b = same_type<Use, b_operand>::value;
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
      arch::load_base<b>(dst.tiles[i][j].data, src, row0 + base_side * i, col0 + base_side * j,
                         L{});
    }
  }
}

// The R x C part of dst at (row0, col0) = src, one warp, converting to the
// shared tile's element type.
template <class TD, class TS, int R, int C, class L, int SR, int SC>
TT_DEVICE void store(st<TD, SR, SC>& dst, const rt<TS, R, C, L>& src, int row0, int col0) {
  const int lane = arch::lane_id();
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; ++e) {
        dst.at(row0 + base_side * i + geom<L>::row(lane, e),
               col0 + base_side * j + geom<L>::col(lane, e)) =
            arch::convert<TD>::from(get(src.tiles[i][j], e));
      }
    }
  }
}

// ---- Registers -> global ----------------------------------------------------------

// Writes the tile to dst at (row0, col0), each element as
// fn(value, row, col) converted to T, skipping what falls outside dst.
// ALIGNED promises dst.ptr and dst.ld are multiples of the leaf's run of
// consecutive elements, so whole runs go out as one store.
template <bool ALIGNED, class T, class TS, int R, int C, class Fn>
TT_DEVICE void store(const gl<T>& dst, const rt<TS, R, C, row_l>& src, long long row0,
                     long long col0, Fn fn) {
  using G = geom<row_l>;
  constexpr int run = G::col_run;
  const int lane = arch::lane_id();
  // Tiles wholly inside dst (all but the edges) skip the per-element bounds.
  const bool inside = row0 + R <= dst.rows && col0 + C <= dst.cols;
#pragma unroll
  for (int i = 0; i < R / base_side; ++i) {
#pragma unroll
    for (int j = 0; j < C / base_side; ++j) {
#pragma unroll
      for (int e = 0; e < arch::frag::elems; e += run) {
        const long long row = row0 + base_side * i + G::row(lane, e);
        const long long col = col0 + base_side * j + G::col(lane, e);
        if (!inside && row >= dst.rows) continue;
        T out[run];
#pragma unroll
        for (int k = 0; k < run; ++k) {
          out[k] = arch::convert<T>::from(fn(get(src.tiles[i][j], e + k), row, col + k));
        }
        T* to = dst.at(row, col);
        if (ALIGNED && (inside || col + run <= dst.cols)) {
          struct alignas(sizeof(T) * run) packet {
            T v[run];
          };
          packet p;
#pragma unroll
          for (int k = 0; k < run; ++k) p.v[k] = out[k];
          *reinterpret_cast<packet*>(to) = p;
        } else {
#pragma unroll
          for (int k = 0; k < run; ++k) {
            if (col + k < dst.cols) to[k] = out[k];
          }
        }
      }
    }
  }
}

// ---- Vectors ----------------------------------------------------------------------

// dst = src, one warp: each lane takes the values of its rows / columns.
template <class T, int N, class D, class L>
TT_DEVICE void load(rv<N, D, L>& dst, const sv<T, N>& src) {
  const int lane = arch::lane_id();
#pragma unroll
  for (int b = 0; b < N / base_side; ++b) {
#pragma unroll
    for (int s = 0; s < rv<N, D, L>::slots; ++s) {
      const int at = base_side * b + (same_type<D, per_row>::value ? geom<L>::slot_row(lane, s)
                                                                   : geom<L>::slot_col(lane, s));
      dst.data[b][s] = arch::to_float(src.data[at]);
    }
  }
}

// dst = src, one warp; each value is written by one lane.
template <class T, int N, class D, class L>
TT_DEVICE void store(sv<T, N>& dst, const rv<N, D, L>& src) {
  const int lane = arch::lane_id();
  const bool owner =
      same_type<D, per_row>::value ? geom<L>::row_owner(lane) : geom<L>::col_owner(lane);
  if (!owner) return;
#pragma unroll
  for (int b = 0; b < N / base_side; ++b) {
#pragma unroll
    for (int s = 0; s < rv<N, D, L>::slots; ++s) {
      const int at = base_side * b + (same_type<D, per_row>::value ? geom<L>::slot_row(lane, s)
                                                                   : geom<L>::slot_col(lane, s));
      dst.data[at] = arch::convert<T>::from(src.data[b][s]);
    }
  }
}

}  // namespace tt

#endif
