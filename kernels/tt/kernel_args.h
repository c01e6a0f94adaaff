// The one parameter of every generated GPU kernel, passed by value. Shared
// by the device code (embedded, compiled by NVRTC/hipRTC) and the host-side
// executors (runtime/cuda, runtime/hip) that fill it: plain C, fixed-width
// fields, no padding surprises between the two compilers.
#ifndef TILETUNE_TT_KERNEL_ARGS_H
#define TILETUNE_TT_KERNEL_ARGS_H

#define TT_MAX_CHAIN 16

typedef struct tt_kernel_args {
  // gemm: A, B, C. Row ops: x, unused, y.
  const void* a;
  const void* b;
  void* out;
  // Row ops whose key has write_prologue_output: x after the prologue, laid
  // out like out, in x's type. Null otherwise.
  void* prologue_out;
  // Norms: gamma, beta.
  const void* weight;
  const void* shift;
  // One entry per chain op: its tensor (bias, residual_add) or null.
  const void* chain_tensors[TT_MAX_CHAIN];
  // One entry per chain op: its scalar (scale) or 0.
  float chain_scalars[TT_MAX_CHAIN];
  // gemm: m, n, k, batch and leading dimensions. Row ops: m = rows, n = cols.
  long long m, n, k, batch;
  long long lda, ldb, ldc;
  float eps;
} tt_kernel_args;

#endif
