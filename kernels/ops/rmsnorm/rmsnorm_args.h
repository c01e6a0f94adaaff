// The launch ABI of rmsnorm, version 2:
// y = chain(prologue(x) / sqrt(mean(prologue(x)^2) + eps) * w) along each
// row. Layout asserted in rmsnorm_op.cpp, documented in docs/kernel-abi.md.
#ifndef TILETUNE_OPS_RMSNORM_ARGS_H
#define TILETUNE_OPS_RMSNORM_ARGS_H

#include "tt/kernel_args.h"

typedef struct tt_rmsnorm_args {
  const void* x;  // [rows][cols], row stride ldx, in the key's input dtype
  const void* w;  // [cols], in the input dtype
  void* y;        // [rows][cols], row stride ldy, in the key's output dtype
  // prologue(x), laid out like y in the input dtype, where the key sets
  // write_prologue_output (the residual stream); null otherwise.
  void* prologue_out;
  tt_chain_args chain;
  long long rows, cols;
  long long ldx, ldy;  // row strides in elements
  float eps;
} tt_rmsnorm_args;

#endif
