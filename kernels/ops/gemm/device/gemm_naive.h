// The straightforward GEMM: one thread per output element, fp32 sums read
// straight from global memory, the same epilogue and output rounding as the
// tile GEMM. The baseline tuned kernels must beat until the vendor library
// (cuBLASLt / hipBLASLt) takes its place.
//
// Config: a_type, b_type, out_type, a_col_major, b_col_major, gated (a
// second sum over b_up gates the first, gemm_gate.h). Launch: 16x16
// threads per block, one block per 16x16 tile of C (row-major over the
// tiles, on grid x), batch on grid z.
#ifndef TILETUNE_TT_GEMM_NAIVE_H
#define TILETUNE_TT_GEMM_NAIVE_H

#include "ops/gemm/device/gemm_gate.h"
#include "ops/gemm/gemm_args.h"
#include "tt/tile.h"

namespace tt::gemm {

template <class C, class Epilogue>
TT_DEVICE void naive_gemm(const tt_gemm_args& args, const Epilogue& epilogue) {
  using TA = typename C::a_type;
  using TB = typename C::b_type;
  using TO = typename C::out_type;
  const long long m = args.m, n = args.n, k = args.k, batch = blockIdx.z;
  const long long tiles_n = (n + 15) / 16;
  const long long row = blockIdx.x / tiles_n * 16 + threadIdx.y;
  const long long col = blockIdx.x % tiles_n * 16 + threadIdx.x;
  if (row >= m || col >= n) return;
  const TA* a = static_cast<const TA*>(args.a) + batch * (C::a_col_major ? k : m) * args.lda;
  const long long b_entry = batch * (C::b_col_major ? n : k) * args.ldb;
  const TB* b = static_cast<const TB*>(args.b) + b_entry;
  const TB* b_up = C::gated ? static_cast<const TB*>(args.b_up) + b_entry : nullptr;
  float sum = 0.0f, up = 0.0f;
  for (long long q = 0; q < k; ++q) {
    const float x = arch::to_float(C::a_col_major ? a[q * args.lda + row] : a[row * args.lda + q]);
    const long long at = C::b_col_major ? col * args.ldb + q : q * args.ldb + col;
    sum += x * arch::to_float(b[at]);
    if constexpr (C::gated) up += x * arch::to_float(b_up[at]);
  }
  if constexpr (C::gated) sum = swiglu(sum, up);
  const long long idx = batch * m * args.ldc + row * args.ldc + col;
  static_cast<TO*>(args.c)[idx] = arch::convert<TO>::from(epilogue(sum, idx, col));
}

}  // namespace tt::gemm

#endif
