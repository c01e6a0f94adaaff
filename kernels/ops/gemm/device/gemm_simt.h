// GPU GEMM on the CUDA/SIMT cores: C = epilogue(A * B) in f32, optionally
// batched (A every m*k, B every k*n, C every m*n elements), A and B row- or
// column-major, any M, N, K; with a gate (Config gated) C =
// epilogue(swiglu(A * B, A * B_up)), B_up laid out like B. Config
// (generated per variant) holds the tuning parameters as constants; Epi is
// the generated epilogue chain.
#ifndef TILETUNE_GEMM_H
#define TILETUNE_GEMM_H

#include "ops/gemm/device/gemm_gate.h"
#include "ops/gemm/gemm_args.h"
#include "tt/device.h"

// How far the depth loop of a block step unrolls. hipRTC (ROCm 5) hoists
// the shared-memory reads of a fully unrolled 16-deep step so far ahead that
// 8x8 thread tiles spill to scratch on gfx90a; by 4 they stay in registers.
// ptxas schedules the full unroll without spilling.
#ifdef TT_HIP
#define TT_UNROLL_DEPTH _Pragma("unroll 4")
#else
#define TT_UNROLL_DEPTH _Pragma("unroll")
#endif

namespace tt {

// Element (i, j) of a matrix stored row- or column-major.
template <bool ColMajor>
TT_DEVICE float matrix_at(const float* p, long long ld, long long i, long long j) {
  return ColMajor ? p[j * ld + i] : p[i * ld + j];
}

// Cfg: tile_m x tile_n outputs per block, tile_k deep steps through shared
// memory; each thread accumulates micro_m x micro_n outputs in registers;
// double_buffer = 1 fetches the next depth step into registers while the
// current one is multiplied (one barrier per step instead of two);
// a_col_major, b_col_major; gated = 1 stages B_up beside B and keeps a
// second set of accumulators.
//
// Shared tiles are depth-major (As[p][i], Bs[p][j]) so that a thread reads
// its fragments as float4s; rows are padded by 4 floats to spread the
// transposing stores of a row-major A (column-major B) over the banks.
// A thread's micro tile is made of 4x4 blocks strided by the thread grid, so
// a warp's fragment reads and C stores touch consecutive float4s.
template <class Cfg, class Epi>
TT_DEVICE void gemm_tiled(const tt_gemm_args& args, const Epi& epi) {
  constexpr int TM = Cfg::tile_m, TN = Cfg::tile_n, TK = Cfg::tile_k;
  constexpr int MM = Cfg::micro_m, MN = Cfg::micro_n;
  constexpr int TY = TM / MM, TX = TN / MN, kThreads = TY * TX;
  constexpr int kStrideA = TM + 4, kStrideB = TN + 4;
  constexpr int kStages = Cfg::double_buffer ? 2 : 1;
  constexpr int kLoadsA = TM * TK / kThreads, kLoadsB = TN * TK / kThreads;
  constexpr bool kColA = Cfg::a_col_major != 0, kColB = Cfg::b_col_major != 0;
  constexpr int kBs = Cfg::gated ? 2 : 1;  // B, and B_up with a gate
  static_assert(TM % MM == 0 && TN % MN == 0, "micro tiles divide the block tile");
  static_assert(MM % 4 == 0 && MN % 4 == 0, "micro tiles are made of 4x4 blocks");
  static_assert(kLoadsA * kThreads == TM * TK && kLoadsB * kThreads == TN * TK,
                "threads divide the tile loads");

  __shared__ fvec<4> a_smem[kStages * TK * kStrideA / 4];
  __shared__ fvec<4> b_smem[kBs * kStages * TK * kStrideB / 4];
  float* As = reinterpret_cast<float*>(a_smem);
  float* Bs = reinterpret_cast<float*>(b_smem);

  const long long M = args.m, N = args.n, K = args.k;
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const long long tiles_m = (M + TM - 1) / TM, tiles_n = (N + TN - 1) / TN;
  const long long per_batch = tiles_m * tiles_n, tiles = per_batch * args.batch;
  float* C = static_cast<float*>(args.c);
  const bool aligned_c =
      reinterpret_cast<unsigned long long>(C) % 16 == 0 && args.ldc % 4 == 0 && (M * N) % 4 == 0;

  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const long long batch = tile / per_batch, rest = tile % per_batch;
    const long long m0 = rest / tiles_n * TM, n0 = rest % tiles_n * TN;
    const float* A = static_cast<const float*>(args.a) + batch * M * K;
    const float* Bo[kBs];
#pragma unroll
    for (int o = 0; o < kBs; ++o) {
      Bo[o] = static_cast<const float*>(o == 0 ? args.b : args.b_up) + batch * K * N;
    }

    // The block's A and B values of the depth step at k0, zero outside the
    // matrices. Consecutive threads take consecutive addresses of global
    // memory: along k for a row-major A, along m for a column-major one.
    // An address is the step's corner (one pointer for the whole block) plus
    // a 32-bit offset inside the tile (the template keeps dimensions < 2^24).
    float ra[kLoadsA], rb[kBs][kLoadsB];
    const int lda = static_cast<int>(args.lda), ldb = static_cast<int>(args.ldb);
    const auto fetch = [&](long long k0) {
      const float* a_step = kColA ? A + k0 * args.lda + m0 : A + m0 * args.lda + k0;
#pragma unroll
      for (int r = 0; r < kLoadsA; ++r) {
        const int l = tid + r * kThreads;
        const int i = kColA ? l % TM : l / TK, p = kColA ? l / TM : l % TK;
        ra[r] = m0 + i < M && k0 + p < K ? a_step[kColA ? p * lda + i : i * lda + p] : 0.0f;
      }
#pragma unroll
      for (int o = 0; o < kBs; ++o) {
        const float* b_step = kColB ? Bo[o] + n0 * args.ldb + k0 : Bo[o] + k0 * args.ldb + n0;
#pragma unroll
        for (int r = 0; r < kLoadsB; ++r) {
          const int l = tid + r * kThreads;
          const int j = kColB ? l / TK : l % TN, p = kColB ? l % TK : l / TN;
          rb[o][r] = k0 + p < K && n0 + j < N ? b_step[kColB ? j * ldb + p : p * ldb + j] : 0.0f;
        }
      }
    };
    const auto stash = [&](int stage) {
#pragma unroll
      for (int r = 0; r < kLoadsA; ++r) {
        const int l = tid + r * kThreads;
        const int i = kColA ? l % TM : l / TK, p = kColA ? l / TM : l % TK;
        As[(stage * TK + p) * kStrideA + i] = ra[r];
      }
#pragma unroll
      for (int o = 0; o < kBs; ++o) {
#pragma unroll
        for (int r = 0; r < kLoadsB; ++r) {
          const int l = tid + r * kThreads;
          const int j = kColB ? l / TK : l % TN, p = kColB ? l % TK : l / TN;
          Bs[((o * kStages + stage) * TK + p) * kStrideB + j] = rb[o][r];
        }
      }
    };

    float acc[kBs][MM][MN] = {};
    fetch(0);
    stash(0);
    __syncthreads();
    int stage = 0;
    for (long long k0 = 0; k0 < K; k0 += TK) {
      const bool more = k0 + TK < K;
      if (Cfg::double_buffer && more) fetch(k0 + TK);
      TT_UNROLL_DEPTH
      for (int p = 0; p < TK; ++p) {
        fvec<4> a[MM / 4];
#pragma unroll
        for (int q = 0; q < MM / 4; ++q) {
          load(a[q], As + (stage * TK + p) * kStrideA + (q * TY + ty) * 4);
        }
#pragma unroll
        for (int o = 0; o < kBs; ++o) {
          fvec<4> b[MN / 4];
#pragma unroll
          for (int q = 0; q < MN / 4; ++q) {
            load(b[q], Bs + ((o * kStages + stage) * TK + p) * kStrideB + (q * TX + tx) * 4);
          }
#pragma unroll
          for (int i = 0; i < MM; ++i) {
#pragma unroll
            for (int j = 0; j < MN; ++j) acc[o][i][j] += a[i / 4].x[i % 4] * b[j / 4].x[j % 4];
          }
        }
      }
      if (Cfg::double_buffer) {
        if (more) stash(stage ^ 1);
        __syncthreads();
        stage ^= 1;
      } else {
        __syncthreads();
        if (more) {
          fetch(k0 + TK);
          stash(0);
          __syncthreads();
        }
      }
    }

    // The value the chain applies to: the product, or the gated pair.
    const auto product = [&](int i, int j) {
      if constexpr (Cfg::gated) return gemm::swiglu(acc[0][i][j], acc[1][i][j]);
      return acc[0][i][j];
    };
#pragma unroll
    for (int i = 0; i < MM; ++i) {
      const long long row = m0 + (i / 4 * TY + ty) * 4 + i % 4;
      if (row >= M) continue;
#pragma unroll
      for (int q = 0; q < MN / 4; ++q) {
        const long long col = n0 + (q * TX + tx) * 4;
        const long long idx = batch * M * N + row * args.ldc + col;
        if (aligned_c && col + 4 <= N) {
          fvec<4> out;
#pragma unroll
          for (int l = 0; l < 4; ++l) out.x[l] = epi(product(i, q * 4 + l), idx + l, col + l);
          store(C + idx, out);
        } else {
#pragma unroll
          for (int l = 0; l < 4; ++l) {
            if (col + l < N) C[idx + l] = epi(product(i, q * 4 + l), idx + l, col + l);
          }
        }
      }
    }
  }
}

// The straightforward kernel: one thread per output element, its dot product
// (both, gated) read from global memory in the operands' own layouts.
template <class Cfg, class Epi>
TT_DEVICE void gemm_naive(const tt_gemm_args& args, const Epi& epi) {
  const long long M = args.m, N = args.n, K = args.k, total = args.batch * M * N;
  const long long step = static_cast<long long>(gridDim.x) * Cfg::threads;
  for (long long e = static_cast<long long>(blockIdx.x) * Cfg::threads + threadIdx.x; e < total;
       e += step) {
    const long long batch = e / (M * N), i = e % (M * N) / N, j = e % N;
    const float* A = static_cast<const float*>(args.a) + batch * M * K;
    const float* B = static_cast<const float*>(args.b) + batch * K * N;
    const float* B_up = Cfg::gated ? static_cast<const float*>(args.b_up) + batch * K * N : nullptr;
    float sum = 0.0f, up = 0.0f;
    for (long long p = 0; p < K; ++p) {
      const float a = matrix_at<Cfg::a_col_major != 0>(A, args.lda, i, p);
      sum += a * matrix_at<Cfg::b_col_major != 0>(B, args.ldb, p, j);
      if constexpr (Cfg::gated) up += a * matrix_at<Cfg::b_col_major != 0>(B_up, args.ldb, p, j);
    }
    if constexpr (Cfg::gated) sum = gemm::swiglu(sum, up);
    const long long idx = batch * M * N + i * args.ldc + j;
    static_cast<float*>(args.c)[idx] = epi(sum, idx, j);
  }
}

}  // namespace tt

#endif
