// The launch ABI of gemm, version 3: c[batch][m][n] = chain(a * b), or with
// a gate chain(act(a * b) * (a * b_up)) element-wise. The one
// by-value parameter of every GPU gemm kernel and what a host gemm kernel's
// entry points to. Layout asserted in gemm_op.cpp, documented in
// docs/kernel-abi.md.
#ifndef TILETUNE_OPS_GEMM_ARGS_H
#define TILETUNE_OPS_GEMM_ARGS_H

#include "tt/kernel_args.h"

typedef struct tt_gemm_args {
  // [batch][m][k] row-major (lda >= k), or column-major (lda >= m) where the
  // key lays a out so; in the key's input dtype.
  const void* a;
  // [batch][k][n] row-major (ldb >= n), or column-major (ldb >= k).
  const void* b;
  // Laid out like b (same ldb): the up projection a gated key multiplies
  // the activated product by (KernelKey.gate); null for other keys.
  const void* b_up;
  // [batch][m][n] row-major (ldc >= n), in the key's output dtype.
  void* c;
  tt_chain_args chain;
  long long m, n, k, batch;
  // Leading dimensions in elements; batch entries follow each other densely
  // (a's every m*lda or k*lda elements, c's every m*ldc).
  long long lda, ldb, ldc;
} tt_gemm_args;

// The argument struct of the TMA GEMM kernels
// (ops/gemm/device/gemm_sm90a_tma_ws.h): the gemm's arguments, then the
// tensor maps of A, B and C for the variant's copy boxes, which the
// launcher encodes (docs/kernel-abi.md); a variant that stores C without
// the copy engine leaves c_map unread, and only a gated one reads b_up_map.
typedef struct tt_gemm_tma_args {
  tt_gemm_args gemm;
  tt_tensor_map a_map;
  tt_tensor_map b_map;
  tt_tensor_map c_map;
  tt_tensor_map b_up_map;
} tt_gemm_tma_args;

#endif
