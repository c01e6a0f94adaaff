#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/core/search_space.h"
#include "kernels/ops/gemm/tile_gemm_space.h"

namespace tiletune::kernels::gemm {

// The GEMM families beside the tile GEMM, each with its own space, launch
// and source (tma_and_decode_gemm_source.cpp), all for A row-major:
//
//   tma_ws_gemm     (gemm_sm90a_tma_ws.h) sm_90a: TMA copies, a producer
//                   warpgroup and two consumer warpgroups, a persistent grid,
//                   TMA stores of C, clusters of two sharing B by multicast;
//                   for m > 64 (prefill); 16-bit inputs with B either way, or
//                   f32 read as tf32 with B column-major.
//   tma_decode_gemm (gemm_sm90a_tma_decode.h) sm_90a: C^T = W A^T with the
//                   weights as the wgmma M side, TMA streaming, split-K over
//                   a cluster; for m <= 64 (decode).
//   mma_decode_gemm (gemm_decode_mma.h) any NVIDIA GPU (mma.sync): weights
//                   straight into registers, split-K over warps; m <= 64.
//
// The decode families take 16-bit inputs and B column-major (x @ W.t());
// of them only tma_decode_gemm computes a gate.
//
// A family that cannot read the key says why (Unsupported*); its space is
// empty (its rules say why) where the device does not fit it.
std::optional<std::string> UnsupportedTmaWsGemm(const GemmProblem& problem);
std::optional<std::string> UnsupportedTmaDecodeGemm(const GemmProblem& problem);
std::optional<std::string> UnsupportedMmaDecodeGemm(const GemmProblem& problem);
SearchSpace TmaWsGemmSpace(const GemmProblem& problem, const GemmTarget& target);
SearchSpace TmaDecodeGemmSpace(const GemmProblem& problem, const GemmTarget& target);
SearchSpace MmaDecodeGemmSpace(const GemmProblem& problem, const GemmTarget& target);

// Dynamic shared memory of a variant, as the device plans compute it
// (their static_asserts check the launch reserves at least as much).
int64_t TmaWsGemmSharedBytes(const GemmProblem& problem, const Variant& v);
int64_t TmaDecodeGemmSharedBytes(const Variant& v);
int64_t MmaDecodeGemmSharedBytes(const Variant& v);

// Rows of a tma_ws_gemm tile one consumer computes: half, or with ping-pong
// all of them.
int64_t TmaWsConsumerRows(const Variant& v);

// tma_ws_gemm's smallest block_m and block_n.
inline constexpr int64_t kTmaWsMinTile = 128;

// Boxes (128 bytes of C a row) a tma_ws_gemm consumer stages at once: the
// whole tile's, or with store_ring the device plan's ring of two.
inline constexpr int64_t kStoreRingBoxes = 2;
int64_t TmaWsStagingBoxes(const GemmProblem& problem, const Variant& v);

// Columns of C a TMA family's tile of `b_rows` rows of B writes (tma_ws_gemm's
// block_n, tma_decode_gemm's block_w): a gate stacks b's rows above as many
// of b_up's, so its C tiles are half as wide.
int64_t TmaOutColumns(const GemmProblem& problem, int64_t b_rows);

// Rows of A a decode variant computes (m rounded up to 16), and the most
// rows the decode families take.
inline constexpr int64_t kDecodeMaxRows = 64;
int64_t DecodeRows(int64_t m);

}  // namespace tiletune::kernels::gemm
