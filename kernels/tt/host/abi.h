// The C ABI between tiletune and a generated host kernel. Embedded into the
// tiletune binary and written next to every generated kernel; the host
// executor includes this same file, so both sides agree on tt_host_args.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Arguments of one call. Tensors are dense f32; batched gemm operands follow
// each other (A every m*k, B every k*n, C every m*n elements).
typedef struct tt_host_args {
  const float* a;       // gemm A; row ops: x (rows x cols, row-major)
  const float* b;       // gemm B
  float* out;           // gemm C (m x n, row-major); row ops: y like x
  float* prologue_out;  // row ops: x after the prologue (like out), or null
  const float* weight;  // rmsnorm/layernorm gamma, one per column
  const float* shift;   // layernorm beta, one per column
  // One entry per op of the key's epilogue chain: the tensor of bias (one
  // per column) and residual_add (shaped like out), null for other ops.
  const float* const* chain_tensors;
  // One entry per chain op: the runtime value of `scale`, 0 for other ops.
  const float* chain_scalars;
  int64_t m, n, k, batch;  // row ops: m = rows, n = cols, k = 0, batch = 1
  int64_t lda, ldb, ldc;   // leading dimensions in elements
  float eps;               // rmsnorm/layernorm
} tt_host_args;

// Every generated kernel exports one entry of this type; 0 means success.
typedef int (*tt_host_entry)(const tt_host_args* args);

#ifdef __cplusplus
}
#define TT_EXPORT extern "C" __attribute__((visibility("default")))
#endif
