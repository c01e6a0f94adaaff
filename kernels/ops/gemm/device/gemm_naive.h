// The straightforward GEMM: one thread per output element, fp32 sums read
// straight from global memory, the same epilogue and output rounding as the
// tile GEMM. The baseline tuned kernels must beat until the vendor library
// (cuBLASLt / hipBLASLt) takes its place.
//
// Config: a_type, b_type, out_type, a_col_major, b_col_major. Launch: 16x16
// threads per block, one block per 16x16 tile of C (row-major over the
// tiles, on grid x), batch on grid z.
#ifndef TILETUNE_TT_GEMM_NAIVE_H
#define TILETUNE_TT_GEMM_NAIVE_H

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
  const TB* b = static_cast<const TB*>(args.b) + batch * (C::b_col_major ? n : k) * args.ldb;
  float sum = 0.0f;
  for (long long q = 0; q < k; ++q) {
    const TA x = C::a_col_major ? a[q * args.lda + row] : a[row * args.lda + q];
    const TB y = C::b_col_major ? b[col * args.ldb + q] : b[q * args.ldb + col];
    sum += arch::to_float(x) * arch::to_float(y);
  }
  const long long idx = batch * m * args.ldc + row * args.ldc + col;
  static_cast<TO*>(args.c)[idx] = arch::convert<TO>::from(epilogue(sum, idx, col));
}

}  // namespace tt::gemm

#endif
