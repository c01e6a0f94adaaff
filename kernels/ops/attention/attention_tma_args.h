// The argument of the attention op's TMA kernels: the op's launch ABI
// struct, then the tensor maps of Q, K and V the launcher encodes for the
// variant's boxes (docs/kernel-abi.md). Plain C, compiled alike by NVRTC,
// the host compiler and tiletune itself.
#ifndef TILETUNE_OPS_ATTENTION_TMA_ARGS_H
#define TILETUNE_OPS_ATTENTION_TMA_ARGS_H

#include "ops/attention/attention_args.h"
#include "tt/kernel_args.h"

typedef struct tt_attention_tma_args {
  tt_attention_args attention;
  tt_tensor_map q_map;
  tt_tensor_map k_map;
  tt_tensor_map v_map;
} tt_attention_tma_args;

#endif
