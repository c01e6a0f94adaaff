// tiletune's tile library: the one header tile kernels include.
//
// Portable vocabulary (same names on every GPU): register tiles rt<T, R, C,
// layout>, shared tiles st<T, R, C>, vectors rv / sv, global views gl<T>;
// ops destination first: load_async / commit / wait (global -> shared),
// load / store (shared <-> registers, registers -> global through a
// functor), mma_AB / mma_ABt / mma_AtB / mma_AtBt, zero / fill / copy / map
// / exp / add / sub / mul, row_max / row_sum / col_max / col_sum,
// broadcast_row / broadcast_col. T is tt::bf16, tt::f16 or float.
//
// Arch leaves (namespace tt::arch) supply the few primitives under them:
// fragment geometry, conversions, shared -> register base-tile loads, the
// base mma step, asynchronous copies.
//   tt_leaf_sm80.h  NVIDIA sm_80+ (and the H200's sm_90): mma.sync, ldmatrix, cp.async
//   tt_leaf_cdna.h  AMD CDNA wave64 (gfx90a+): MFMA 16x16x16, LDS, staged copies
// The sm_90a leaf (next step) goes next to them as tt_leaf_sm90a.h, to be
// included in the #else branch below, after tt_leaf_sm80.h, under
// #ifdef __CUDA_ARCH_FEAT_SM90_ALL (NVRTC defines it for
// --gpu-architecture=sm_90a, which a source requests with the CUDA
// backend's kArchSpecificOption). It adds warpgroup-wide names on top of the
// sm80 ones: tt::warpgroup::mma_AB(d, st a, st b) over wgmma descriptors,
// TMA tile loads (load_async(st, tensor map, coords, mbarrier)) and
// mbarrier arrive/wait, and setmaxnreg for producer/consumer warp roles.
// wgmma's accumulator per warp is the m16n8 layout of rt<float, ..., row_l>,
// so the ops here and every epilogue run unchanged on its results; a GEMM
// picks it by swapping its main loop only (see kernels/gemm/include/tt_gemm.h).
#ifndef TILETUNE_TT_TILE_H
#define TILETUNE_TT_TILE_H

#include "tt_tile_base.h"

#ifdef TT_HIP
#include "tt_leaf_cdna.h"
#else
#include "tt_leaf_sm80.h"
#endif

#include "tt_tile_memory.h"
#include "tt_tile_mma.h"
#include "tt_tile_ops.h"
#include "tt_tile_types.h"

#endif
