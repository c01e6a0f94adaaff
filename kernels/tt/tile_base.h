// Element types of the tile library and how register tiles hold them. The
// run-time compilers (NVRTC, hipRTC) give us no cuda_bf16.h / hip_bf16.h,
// so the 16-bit float types are plain bit containers; the arch leaf converts
// them with the hardware's own instructions.
#ifndef TILETUNE_TT_TILE_BASE_H
#define TILETUNE_TT_TILE_BASE_H

#include "tt/device.h"

namespace tt {

struct bf16 {
  unsigned short bits;
};

struct f16 {
  unsigned short bits;
};

// How a register tile stores elements of T: 16-bit types two to a 32-bit
// register, the form tensor-core operands take (low half = first element);
// float one per register.
template <class T>
struct elem;
template <>
struct elem<float> {
  using word = float;
  static constexpr int per_word = 1;
};
template <>
struct elem<bf16> {
  using word = unsigned;
  static constexpr int per_word = 2;
};
template <>
struct elem<f16> {
  using word = unsigned;
  static constexpr int per_word = 2;
};

template <class A, class B>
struct same_type {
  static constexpr bool value = false;
};
template <class A>
struct same_type<A, A> {
  static constexpr bool value = true;
};

template <bool B, class T, class F>
struct select_type {
  using type = T;
};
template <class T, class F>
struct select_type<false, T, F> {
  using type = F;
};
template <bool B, class T, class F>
using select_t = typename select_type<B, T, F>::type;

__host__ __device__ constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

// Register-tile layouts. row_l: the layout of a tensor-core A operand and of
// the accumulator. col_l: its transpose, element for element: a col_l tile
// of R x C holds exactly the registers of a row_l tile of C x R, which is
// what makes B and transposed operands free to feed to the mma.
struct row_l {};
struct col_l {};

// Register-vector distributions: one value per row of a tile (what row_max
// makes) or one per column (what col_sum makes, and broadcast_row reads).
struct per_row {};
struct per_col {};

}  // namespace tt

#endif
