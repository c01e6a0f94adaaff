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
//   tt/arch/sm80_mma_sync.h  NVIDIA sm_80+ (and the H200's sm_90): mma.sync, ldmatrix, cp.async
//   tt/arch/sm80_tf32_mma_sync.h  the same for float tiles: mma.sync .tf32 (f32 keys
//                   that allow tf32)
//   tt/arch/cdna_mfma.h  AMD CDNA wave64 (gfx90a+): MFMA 16x16x16 (32x32x8 base
//                   tiles where a source defines TT_MFMA_32), LDS, staged copies
//   tt/arch/sm90a_wgmma.h NVIDIA sm_90a (H100 / H200 compiled for the arch-specific
//                   target): warpgroup MMA (wgmma) over shared-memory
//                   descriptors and its fences, on top of the sm80 leaf. Only a
//                   compile for sm_90a sees it (NVRTC defines
//                   __CUDA_ARCH_FEAT_SM90_ALL there; a source asks for that
//                   target with kernels::kArchSpecificOption). Its names live
//                   in tt::warpgroup; wgmma's accumulator per warp is the m16n8
//                   layout of rt<float, 16, N, row_l>, so the ops here and every
//                   epilogue run unchanged on its results.
#ifndef TILETUNE_TT_TILE_H
#define TILETUNE_TT_TILE_H

#include "tt/tile_base.h"

#ifdef TT_HIP
#include "tt/arch/cdna_mfma.h"
#else
#include "tt/arch/sm80_mma_sync.h"
#include "tt/arch/sm80_tf32_mma_sync.h"
#endif

#include "tt/tile_memory.h"
#include "tt/tile_mma.h"
#include "tt/tile_ops.h"
#include "tt/tile_types.h"

#if !defined(TT_HIP) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include "tt/arch/sm90a_wgmma.h"
#endif

#endif
