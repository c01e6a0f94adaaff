// NVIDIA sm_90a leaf of the tile library (H100 / H200 compiled for the
// arch-specific target): warpgroup-wide asynchronous MMA (wgmma) reading
// both operands from shared memory through matrix descriptors, and the
// fences that order it. It sits on top of the sm80 leaf: shared tiles are
// still filled by load_async (cp.async), and the accumulator that wgmma
// leaves in each warp is the m16n8 layout of rt<float, 16, N, row_l>, so
// every register-tile op and epilogue runs unchanged on its results.
//
// A warpgroup is 4 consecutive warps starting at a warp index divisible by
// 4. One wgmma m64nNk16 multiplies a 64 x 16 slice of A by a 16 x N slice
// of B; warp w of the warpgroup holds rows 16w..16w+15 of the 64 x N result.
// Thread-block clusters (tt::cluster) come with it (tt/arch/sm90_cluster.h).
#ifndef TILETUNE_TT_LEAF_SM90A_H
#define TILETUNE_TT_LEAF_SM90A_H

#include "tt/arch/sm80_mma_sync.h"
#include "tt/arch/sm90_cluster.h"
#include "tt/tile_types.h"

#define TT_LEAF_SM90A 1

namespace tt::warpgroup {

constexpr int warps = 4;
constexpr int threads = warps * arch::lanes;

TT_DEVICE int id() {
  return static_cast<int>(threadIdx.x) / threads;
}
// This warp's index inside its warpgroup: which 16 rows of 64 it holds.
TT_DEVICE int warp() {
  return arch::warp_id() % warps;
}

// ---- Shared-memory matrix descriptors ------------------------------------------
// wgmma reads K-major operands (rows of 128 bytes: 64 16-bit elements or 32
// floats) in the 128-byte swizzle: 16-byte chunk c of row r sits at chunk c ^ (r % 8),
// which is exactly how st<T, R, 128 / sizeof(T)> lays out its rows
// (tt/tile_types.h).
// The hardware applies the swizzle to address bits, so the tile must start
// on a 1024-byte boundary (8 rows x 128 bytes, one swizzle atom); the
// caller aligns it. Fields: start address >> 4 (bits 0-13), leading byte
// offset (unused by swizzled K-major layouts, 1 by convention; bits 16-29),
// stride byte offset between 8-row groups >> 4 (bits 32-45), swizzle mode
// (bits 62-63, 1 = 128 bytes).
constexpr int swizzle_rows = 8;
constexpr int swizzle_bytes = 128;
constexpr int atom_bytes = swizzle_rows * swizzle_bytes;
// One wgmma covers 32 bytes of k: k16 of 16-bit operands, k8 of tf32
// (floats the tensor cores read as tf32), which only come K-major.
constexpr int k_step_bytes = 32;
template <class T>
inline constexpr int k_step = k_step_bytes / static_cast<int>(sizeof(T));

// The first swizzle-atom boundary at or after `shared`: the swizzle needs
// atom-aligned tiles, and dynamic shared memory may start on a smaller
// boundary whatever its declaration asks; launches reserve atom_bytes of
// slack for the step.
TT_DEVICE char* atom_aligned(char* shared) {
  const unsigned misalign = arch::shared_address(shared) % atom_bytes;
  return shared + (misalign ? atom_bytes - misalign : 0);
}

// The descriptor of rows [row0, row0 + 64) and k step `step` (the 32
// bytes 32 step .. 32 step + 31 of each row: 16 16-bit or 8 tf32 elements)
// of a K-major tile; row0 a multiple of 8. Moving along k inside the
// swizzled row is a plain 32-byte step of the start address: the hardware
// swizzles the address it forms.
template <class T, int R, int C>
TT_DEVICE unsigned long long descriptor(const st<T, R, C>& tile, int row0, int step) {
  static_assert(st<T, R, C>::row_bytes == swizzle_bytes,
                "wgmma descriptors here cover rows of 128 bytes");
  const unsigned address = arch::shared_address(tile.data) +
                           static_cast<unsigned>(row0 * swizzle_bytes + step * k_step_bytes);
  return static_cast<unsigned long long>((address & 0x3ffff) >> 4) | (1ull << 16) |
         (static_cast<unsigned long long>(atom_bytes >> 4) << 32) | (1ull << 62);
}

// The descriptor of k16 step `step` (rows 16 step .. 16 step + 15) of an
// N-major B operand: a K x N matrix stored as PANELS consecutive shared
// tiles st<T, R, 64>, panel p holding columns 64p .. 64p + 63 of every row
// (a V tile of attention: keys are the rows, head-dim columns contiguous).
// In N-major swizzled layouts the leading byte offset is the step from one
// 64-wide column panel to the next and the stride byte offset the step
// between 8-row groups along k (one swizzle atom); 16 rows of k are two
// atoms, so a step moves the start address by two atoms.
template <class T, int R>
TT_DEVICE unsigned long long descriptor_n_major(const st<T, R, 64>& first_panel, int step) {
  using S = st<T, R, 64>;
  static_assert(sizeof(T) == 2 && S::row_bytes == swizzle_bytes,
                "wgmma descriptors here cover 16-bit rows of 128 bytes");
  static_assert(R % 16 == 0 && S::bytes % atom_bytes == 0 && (S::bytes >> 4) < (1 << 14),
                "panels are whole swizzle atoms and their stride fits the descriptor");
  const unsigned address =
      arch::shared_address(first_panel.data) + static_cast<unsigned>(step * 2 * atom_bytes);
  return static_cast<unsigned long long>((address & 0x3ffff) >> 4) |
         (static_cast<unsigned long long>(S::bytes >> 4) << 16) |
         (static_cast<unsigned long long>(atom_bytes >> 4) << 32) | (1ull << 62);
}

// ---- Ordering ------------------------------------------------------------------

// Before the first wgmma that reads or writes registers other instructions
// touched (the zeroed accumulator, the previous epilogue).
TT_DEVICE void fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
// Closes the group of wgmma issued since the last commit.
TT_DEVICE void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
// Waits until at most N committed groups of this warpgroup are in flight.
template <int N>
TT_DEVICE void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Shared memory written through the generic proxy (cp.async, plain stores)
// becomes visible to wgmma, which reads through the async proxy, only after
// the writing thread runs this, before the barrier that hands it over.
TT_DEVICE void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Pins the accumulator's registers at this point of the program: wgmma
// writes them behind the compiler's back, so no access may move across an
// issue or a wait.
template <int N>
TT_DEVICE void hold(rt<float, 16, N, row_l>& d) {
#pragma unroll
  for (int t = 0; t < N / 16; ++t) {
#pragma unroll
    for (int e = 0; e < arch::frag::elems; ++e)
      asm volatile("" : "+f"(d.tiles[0][t].data[e])::"memory");
  }
}

// Pins a 16-bit register A operand (P of attention) the same way: an
// issued wgmma reads it until its group completes, so no new value may
// take its registers before the wait.
template <class T, int N>
TT_DEVICE void hold(rt<T, 16, N, row_l>& a) {
  static_assert(sizeof(T) == 2, "register A operands are 16-bit");
#pragma unroll
  for (int t = 0; t < N / 16; ++t) {
#pragma unroll
    for (int w = 0; w < rt_base<T>::words; ++w)
      asm volatile("" : "+r"(a.tiles[0][t].data[w])::"memory");
  }
}

// ---- Register reallocation -----------------------------------------------------
// A warp-specialised block moves registers from the warpgroup that only
// issues copies to those that hold accumulators. Every warp of the
// warpgroup runs it; the kernel needs a register cap at entry
// (__launch_bounds__(threads, 1), as TT_KERNEL gives), else ptxas ignores it.
template <int N>
TT_DEVICE void shrink_registers() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
TT_DEVICE void grow_registers() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// ---- Warpgroup MMA -----------------------------------------------------------------
// d (this warp's 16 x N share of the warpgroup's 64 x N tile) += A * B,
// k_step elements of k per wgmma. Asynchronous: d is valid only after
// commit() and wait<>().

namespace detail {

// Accumulator register i of wgmma's m64nN layout is element i % 8 of base
// tile i / 8: both place two adjacent columns of row lane / 4 (+ 8) per pair.
#define TT_WG_D8(t)                                                                          \
  "+f"(d.tiles[0][t].data[0]), "+f"(d.tiles[0][t].data[1]), "+f"(d.tiles[0][t].data[2]),     \
      "+f"(d.tiles[0][t].data[3]), "+f"(d.tiles[0][t].data[4]), "+f"(d.tiles[0][t].data[5]), \
      "+f"(d.tiles[0][t].data[6]), "+f"(d.tiles[0][t].data[7])
#define TT_WG_D16 TT_WG_D8(0), TT_WG_D8(1)
#define TT_WG_D24 TT_WG_D16, TT_WG_D8(2)
#define TT_WG_D32 TT_WG_D16, TT_WG_D8(2), TT_WG_D8(3)
#define TT_WG_D64 TT_WG_D32, TT_WG_D8(4), TT_WG_D8(5), TT_WG_D8(6), TT_WG_D8(7)
#define TT_WG_D128                                                                             \
  TT_WG_D64, TT_WG_D8(8), TT_WG_D8(9), TT_WG_D8(10), TT_WG_D8(11), TT_WG_D8(12), TT_WG_D8(13), \
      TT_WG_D8(14), TT_WG_D8(15)

#define TT_WG_R8 "%0, %1, %2, %3, %4, %5, %6, %7"
#define TT_WG_R16 TT_WG_R8 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define TT_WG_R24 TT_WG_R16 ", %16, %17, %18, %19, %20, %21, %22, %23"
#define TT_WG_R32 TT_WG_R24 ", %24, %25, %26, %27, %28, %29, %30, %31"
#define TT_WG_R64                            \
  TT_WG_R32                                  \
  ", "                                       \
  "%32, %33, %34, %35, %36, %37, %38, %39, " \
  "%40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, " \
  "%56, %57, %58, %59, %60, %61, %62, %63"
#define TT_WG_R128                                   \
  TT_WG_R64                                          \
  ", "                                               \
  "%64, %65, %66, %67, %68, %69, %70, %71, "         \
  "%72, %73, %74, %75, %76, %77, %78, %79, "         \
  "%80, %81, %82, %83, %84, %85, %86, %87, "         \
  "%88, %89, %90, %91, %92, %93, %94, %95, "         \
  "%96, %97, %98, %99, %100, %101, %102, %103, "     \
  "%104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, " \
  "%120, %121, %122, %123, %124, %125, %126, %127"

// The m64nN shapes issued here, each as CASE(N, its accumulator registers,
// the operand numbers of the five inputs that follow them, its
// accumulator operands, ...): an if-constexpr chain over N.
#define TT_WG_SHAPES(CASE, ...)                                                    \
  CASE(16, TT_WG_R8, 8, 9, 10, 11, 12, TT_WG_D8(0), __VA_ARGS__)                   \
  CASE(32, TT_WG_R16, 16, 17, 18, 19, 20, TT_WG_D16, __VA_ARGS__)                  \
  CASE(48, TT_WG_R24, 24, 25, 26, 27, 28, TT_WG_D24, __VA_ARGS__)                  \
  CASE(64, TT_WG_R32, 32, 33, 34, 35, 36, TT_WG_D32, __VA_ARGS__)                  \
  CASE(128, TT_WG_R64, 64, 65, 66, 67, 68, TT_WG_D64, __VA_ARGS__)                 \
  CASE(256, TT_WG_R128, 128, 129, 130, 131, 132, TT_WG_D128, __VA_ARGS__) {        \
    static_assert(N != N, "wgmma tiles here are 16, 32, 48, 64, 128 or 256 wide"); \
  }

// Both operands from shared memory (descriptors `a` and `b`); scale-d = 1
// (accumulate), A and B unscaled, then the 16-bit types' transpose
// immediates (IMM), which tf32 has not.
#define TT_WG_SS(n, REGS, I0, I1, I2, I3, I4, D, TYPES, IMM)                                 \
  if constexpr (N == n) {                                                                    \
    asm volatile(                                                                            \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" #n TYPES \
        " {" REGS "}, %" #I0 ", %" #I1 ", p, 1, 1" IMM ";\n}"                                \
        : D                                                                                  \
        : "l"(a), "l"(b));                                                                   \
  } else

// A from registers (four packed 16-bit pairs), B from the descriptor `b`.
#define TT_WG_RS(n, REGS, I0, I1, I2, I3, I4, D, TYPES, IMM)                                  \
  if constexpr (N == n) {                                                                     \
    asm volatile(                                                                             \
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" #n TYPES  \
        " {" REGS "}, {%" #I0 ", %" #I1 ", %" #I2 ", %" #I3 "}, %" #I4 ", p, 1, 1" IMM ";\n}" \
        : D                                                                                   \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                                \
  } else

// A K-major; B K-major (B_N_MAJOR false: the N x k block is stored as N
// rows) or N-major (true: k rows of N, 16-bit only).
template <class T, int N, bool B_N_MAJOR>
TT_DEVICE void mma_ss(rt<float, 16, N, row_l>& d, unsigned long long a, unsigned long long b) {
  if constexpr (same_type<T, float>::value) {
    static_assert(!B_N_MAJOR, "tf32 wgmma reads K-major operands only");
    TT_WG_SHAPES(TT_WG_SS, "k8.f32.tf32.tf32", "")
  } else if constexpr (same_type<T, bf16>::value && B_N_MAJOR) {
    TT_WG_SHAPES(TT_WG_SS, "k16.f32.bf16.bf16", ", 0, 1")
  } else if constexpr (same_type<T, bf16>::value) {
    TT_WG_SHAPES(TT_WG_SS, "k16.f32.bf16.bf16", ", 0, 0")
  } else if constexpr (B_N_MAJOR) {
    static_assert(same_type<T, f16>::value, "wgmma operands here are bf16, f16 or tf32");
    TT_WG_SHAPES(TT_WG_SS, "k16.f32.f16.f16", ", 0, 1")
  } else {
    static_assert(same_type<T, f16>::value, "wgmma operands here are bf16, f16 or tf32");
    TT_WG_SHAPES(TT_WG_SS, "k16.f32.f16.f16", ", 0, 0")
  }
}

// A from registers, B N-major (transposed).
template <class T, int N>
TT_DEVICE void mma_rs_n_major(rt<float, 16, N, row_l>& d, const unsigned (&a)[4],
                              unsigned long long b) {
  if constexpr (same_type<T, bf16>::value) {
    TT_WG_SHAPES(TT_WG_RS, "k16.f32.bf16.bf16", ", 1")
  } else {
    static_assert(same_type<T, f16>::value, "register-A wgmma operands here are bf16 or f16");
    TT_WG_SHAPES(TT_WG_RS, "k16.f32.f16.f16", ", 1")
  }
}

#undef TT_WG_RS
#undef TT_WG_SS
#undef TT_WG_SHAPES
#undef TT_WG_R128
#undef TT_WG_R64
#undef TT_WG_R32
#undef TT_WG_R24
#undef TT_WG_R16
#undef TT_WG_R8
#undef TT_WG_D128
#undef TT_WG_D64
#undef TT_WG_D32
#undef TT_WG_D24
#undef TT_WG_D16
#undef TT_WG_D8

}  // namespace detail

// d += A[a_row0 .. a_row0 + 64) x (k step `step`) * B[0 .. N) x (same k)^T
// for the whole warpgroup; a and b are K-major shared tiles of 128-byte rows.
template <class T, int AR, int AC, int N, int BC>
TT_DEVICE void mma_ABt(rt<float, 16, N, row_l>& d, const st<T, AR, AC>& a, int a_row0,
                       const st<T, N, BC>& b, int step) {
  detail::mma_ss<T, N, false>(d, descriptor(a, a_row0, step), descriptor(b, 0, step));
}

// d += A[a_row0 .. a_row0 + 64) x (k16 step `step`) * B for the whole
// warpgroup, A a K-major shared tile and B a K x N shared matrix stored
// N-major in 64-wide panels (descriptor_n_major; 16-bit operands).
template <class T, int AR, int N, int R>
TT_DEVICE void mma_AB(rt<float, 16, N, row_l>& d, const st<T, AR, 64>& a, int a_row0,
                      const st<T, R, 64>& b_first_panel, int step) {
  static_assert(N % 64 == 0, "B holds N / 64 panels");
  detail::mma_ss<T, N, true>(d, descriptor(a, a_row0, step),
                             descriptor_n_major(b_first_panel, step));
}

// d += A * B for the whole warpgroup, A (this warp's 16 rows of a 64 x K
// block) from registers and B a K x N shared matrix stored N-major in
// 64-wide panels (descriptor_n_major): k16 step `step` multiplies base tile
// `step` of `a` (columns 16 step ..) with rows 16 step .. of B. A's 16-bit
// registers are exactly those of a float accumulator converted in place
// (copy()), so P = softmax(S) feeds P V without leaving registers.
template <class T, int K, int N, int R>
TT_DEVICE void mma_AB(rt<float, 16, N, row_l>& d, const rt<T, 16, K, row_l>& a,
                      const st<T, R, 64>& b_first_panel, int step) {
  static_assert(R >= K && N % 64 == 0, "B holds K rows in N / 64 panels");
  detail::mma_rs_n_major<T, N>(d, a.tiles[0][step].data, descriptor_n_major(b_first_panel, step));
}

}  // namespace tt::warpgroup

#endif
