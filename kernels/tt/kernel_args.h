// What every op's kernel argument struct (kernels/ops/<op>/<op>_args.h)
// ends its tensors with: the runtime arguments of the key's prologue and
// epilogue chain. Plain C with fixed-width fields, compiled alike by
// NVRTC/hipRTC, the host compiler and tiletune itself, so one struct is the
// launch ABI of an op on every backend (docs/kernel-abi.md).
#ifndef TILETUNE_TT_KERNEL_ARGS_H
#define TILETUNE_TT_KERNEL_ARGS_H

#define TT_MAX_CHAIN 16

// The byte alignment every kernel may assume of every tensor's address (its
// widest vector access: 16-byte loads, cp.async). Served in the launch ABI
// (KernelAbi.tensor_alignment) for launchers to check.
#define TT_TENSOR_ALIGNMENT 16

// One entry per prologue op, then one per chain op, in key order.
typedef struct tt_chain_args {
  // bias (one value per output column), residual_add (shaped like the
  // output): the op's tensor, in its ChainOp dtype. Null for other ops.
  const void* tensors[TT_MAX_CHAIN];
  // scale: its value. 0 for other ops.
  float scalars[TT_MAX_CHAIN];
} tt_chain_args;

// A CUDA tensor map (the driver's CUtensorMap: 128 opaque bytes, 64-byte
// aligned) as a kernel argument: the launcher encodes it on the host for one
// tensor and one copy box (docs/kernel-abi.md), TMA kernels read it
// (tt/arch/sm90_tma.h).
#ifdef __cplusplus
#define TT_ALIGNED(n) alignas(n)
#else
#define TT_ALIGNED(n) _Alignas(n)
#endif
typedef struct tt_tensor_map {
  TT_ALIGNED(64) unsigned long long opaque[16];
} tt_tensor_map;

#endif
