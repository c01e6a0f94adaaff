// The launch ABI of elementwise, version 2: y = chain(prologue(x)), element by
// element over a dense [rows][cols]. Layout asserted in elementwise_op.cpp,
// documented in docs/kernel-abi.md.
#ifndef TILETUNE_OPS_ELEMENTWISE_ARGS_H
#define TILETUNE_OPS_ELEMENTWISE_ARGS_H

#include "tt/kernel_args.h"

typedef struct tt_elementwise_args {
  const void* x;  // [rows][cols], dense, in the key's input dtype
  void* y;        // [rows][cols], dense, in the key's output dtype
  tt_chain_args chain;
  long long rows, cols;
} tt_elementwise_args;

#endif
