// Host GEMM kernels: C = epilogue(A * B), optionally batched, A and B row- or
// column-major. Config (generated per variant) holds the tuning parameters as
// constants; Epi is the generated epilogue chain.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "ops/gemm/gemm_args.h"
#include "tt/host/abi.h"
#include "tt/host/parallel.h"
#include "tt/host/rows.h"

namespace tt {

// Sixteen floats: one zmm register on AVX-512; the compiler splits it into
// two ymm (AVX2) or four xmm (SSE) registers elsewhere.
typedef float vf16 __attribute__((vector_size(64)));
constexpr int64_t kVf16Lanes = 16;

// A gated key's value before the chain (Cfg::gated): silu(gate) * up.
inline float swiglu(float gate, float up) {
  return gate / (1.0f + std::exp(-gate)) * up;
}

// Element (i, j) of a matrix stored row- or column-major.
template <bool ColMajor>
inline float matrix_at(const float* p, int64_t ld, int64_t i, int64_t j) {
  return ColMajor ? p[j * ld + i] : p[i * ld + j];
}

// Copies rows [i0, i0+mc) x depth [p0, p0+kc) of A into panels of MR rows,
// depth-major inside a panel, zero-padding the last panel: the micro-kernel
// then reads A sequentially whatever its layout.
template <int64_t MR, bool ColMajor>
void pack_a(const float* a, int64_t lda, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
            float* dst) {
  for (int64_t ir = 0; ir < mc; ir += MR, dst += MR * kc) {
    const int64_t rows = std::min(MR, mc - ir);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t r = 0; r < MR; ++r) {
        dst[p * MR + r] = r < rows ? matrix_at<ColMajor>(a, lda, i0 + ir + r, p0 + p) : 0.0f;
      }
    }
  }
}

// Copies depth [p0, p0+kc) x columns [j0, j0+nc) of B into panels of NR
// columns, depth-major inside a panel, zero-padding the last panel.
template <int64_t NR, bool ColMajor>
void pack_b(const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
            float* dst) {
  for (int64_t jr = 0; jr < nc; jr += NR, dst += NR * kc) {
    const int64_t cols = std::min(NR, nc - jr);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t c = 0; c < NR; ++c) {
        dst[p * NR + c] = c < cols ? matrix_at<ColMajor>(b, ldb, p0 + p, j0 + jr + c) : 0.0f;
      }
    }
  }
}

// acc[MR x NR] = A panel * B panel over kc steps of depth, the accumulators
// held in vector registers; the depth loop is unrolled KU times.
template <int64_t MR, int64_t NR, int64_t KU>
inline void micro_tile(const float* ap, const float* bp, int64_t kc, float* out) {
  constexpr int64_t V = NR / kVf16Lanes;
  vf16 acc[MR][V] = {};
  const auto step = [&](int64_t p) {
    vf16 bv[V];
    for (int64_t v = 0; v < V; ++v) {
      std::memcpy(&bv[v], bp + p * NR + v * kVf16Lanes, sizeof(vf16));
    }
    for (int64_t r = 0; r < MR; ++r) {
      const float av = ap[p * MR + r];
      for (int64_t v = 0; v < V; ++v) acc[r][v] += av * bv[v];
    }
  };
  int64_t p = 0;
  for (; p + KU <= kc; p += KU) {
    for (int64_t u = 0; u < KU; ++u) step(p + u);
  }
  for (; p < kc; ++p) step(p);
  std::memcpy(out, acc, sizeof(acc));
}

// Cache-blocked GEMM (GotoBLAS loop order): for each tile_n x tile_k block
// of B (packed once per thread) and each tile_m x tile_k block of A, micro
// tiles of micro_m x micro_n. Partial sums over depth blocks accumulate in C;
// the last depth block applies the epilogue as it stores.
template <class Cfg, class Epi>
int gemm_blocked(const tt_gemm_args* args, const Epi& epi) {
  constexpr int64_t TM = Cfg::tile_m, TN = Cfg::tile_n, TK = Cfg::tile_k;
  constexpr int64_t MR = Cfg::micro_m, NR = Cfg::micro_n;
  static_assert(TM % MR == 0, "micro_m must divide tile_m");
  static_assert(TN % NR == 0, "micro_n must divide tile_n");
  static_assert(NR % kVf16Lanes == 0, "micro_n must be a multiple of 16");
  const int64_t M = args->m, N = args->n, K = args->k, ldc = args->ldc;
  const int64_t blocks = (M + TM - 1) / TM;

  tt::parallel_ranges(Cfg::threads, args->batch * blocks, [&](int64_t t0, int64_t t1) {
    // Packing buffers, left uninitialized: packing writes every element.
    const std::unique_ptr<float[]> ap(new float[TM * TK]), bp(new float[TN * TK]);
    float tile[MR * NR];
    for (int64_t batch = t0 / blocks; batch * blocks < t1; ++batch) {
      const float* A = floats(args->a) + batch * M * K;
      const float* B = floats(args->b) + batch * K * N;
      float* C = floats(args->c) + batch * M * N;
      const int64_t row0 = (std::max(t0, batch * blocks) - batch * blocks) * TM;
      const int64_t row1 = std::min(M, (std::min(t1, (batch + 1) * blocks) - batch * blocks) * TM);
      for (int64_t jc = 0; jc < N; jc += TN) {
        const int64_t nc = std::min(TN, N - jc);
        for (int64_t pc = 0; pc < K; pc += TK) {
          const int64_t kc = std::min(TK, K - pc);
          const bool first = pc == 0, last = pc + kc == K;
          pack_b<NR, Cfg::b_col_major != 0>(B, args->ldb, pc, kc, jc, nc, bp.get());
          for (int64_t ic = row0; ic < row1; ic += TM) {
            const int64_t mc = std::min(TM, row1 - ic);
            pack_a<MR, Cfg::a_col_major != 0>(A, args->lda, ic, mc, pc, kc, ap.get());
            for (int64_t jr = 0; jr < nc; jr += NR) {
              for (int64_t ir = 0; ir < mc; ir += MR) {
                micro_tile<MR, NR, Cfg::k_unroll>(ap.get() + ir * kc, bp.get() + jr * kc, kc, tile);
                const int64_t rows = std::min(MR, mc - ir), cols = std::min(NR, nc - jr);
                for (int64_t r = 0; r < rows; ++r) {
                  const int64_t row = ic + ir + r;
                  float* c = C + row * ldc + jc + jr;
                  const float* t = tile + r * NR;
                  if (last) {
                    const int64_t idx = batch * M * N + row * ldc + jc + jr;
                    for (int64_t j = 0; j < cols; ++j) {
                      c[j] = epi(t[j] + (first ? 0.0f : c[j]), idx + j, jc + jr + j);
                    }
                  } else {
                    for (int64_t j = 0; j < cols; ++j) c[j] = t[j] + (first ? 0.0f : c[j]);
                  }
                }
              }
            }
          }
        }
      }
    }
  });
  return 0;
}

// Rows without packing, split over Cfg::threads: B is read once per output
// row as it lies, which small problems and decode (m = 1: a GEMV) favour.
// A row-major B: the row accumulates A(i, p) * B(p, :) over p (i-k-j order,
// the inner loop walks a row of B). A column-major B (weights stored [n][k]):
// each output is the dot product of A's row and B's contiguous column, in
// kVf16Lanes lanes.
// A gated key (Cfg::gated) computes the row twice, with b and with b_up,
// and combines them before the epilogue.
template <class Cfg, class Epi>
int gemm_rowwise(const tt_gemm_args* args, const Epi& epi) {
  const int64_t M = args->m, N = args->n, K = args->k;
  constexpr int products = Cfg::gated != 0 ? 2 : 1;
  tt::parallel_ranges(Cfg::threads, args->batch * M, [&](int64_t r0, int64_t r1) {
    const std::unique_ptr<float[]> acc(new float[products * N]);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t batch = r / M, i = r % M;
      const float* A = floats(args->a) + batch * M * K;
      const auto a = [&](int64_t p) {
        return matrix_at<Cfg::a_col_major != 0>(A, args->lda, i, p);
      };
      for (int product = 0; product < products; ++product) {
        const float* B = floats(product == 0 ? args->b : args->b_up) + batch * K * N;
        float* out = acc.get() + product * N;
        if constexpr (Cfg::b_col_major != 0) {
          for (int64_t j = 0; j < N; ++j) {
            const float* column = B + j * args->ldb;
            out[j] = lane_sum<kVf16Lanes>(K, [&](int64_t p) { return a(p) * column[p]; });
          }
        } else {
          std::fill(out, out + N, 0.0f);
          for (int64_t p = 0; p < K; ++p) {
            const float ap = a(p);
            for (int64_t j = 0; j < N; ++j) out[j] += ap * B[p * args->ldb + j];
          }
        }
      }
      if constexpr (Cfg::gated != 0) {
        for (int64_t j = 0; j < N; ++j) acc[j] = swiglu(acc[j], acc[N + j]);
      }
      const int64_t idx = batch * M * N + i * args->ldc;
      for (int64_t j = 0; j < N; ++j) floats(args->c)[idx + j] = epi(acc[j], idx + j, j);
    }
  });
  return 0;
}

// The straightforward kernel the tuned one must beat: one dot product per
// output element, read in the operands' own layouts.
template <class Cfg, class Epi>
int gemm_naive(const tt_gemm_args* args, const Epi& epi) {
  const int64_t M = args->m, N = args->n, K = args->k;
  for (int64_t batch = 0; batch < args->batch; ++batch) {
    const float* A = floats(args->a) + batch * M * K;
    const float* B = floats(args->b) + batch * K * N;
    const float* B_up = Cfg::gated != 0 ? floats(args->b_up) + batch * K * N : nullptr;
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        float sum = 0.0f, up = 0.0f;
        for (int64_t p = 0; p < K; ++p) {
          const float a = matrix_at<Cfg::a_col_major != 0>(A, args->lda, i, p);
          sum += a * matrix_at<Cfg::b_col_major != 0>(B, args->ldb, p, j);
          if constexpr (Cfg::gated != 0) {
            up += a * matrix_at<Cfg::b_col_major != 0>(B_up, args->ldb, p, j);
          }
        }
        if constexpr (Cfg::gated != 0) sum = swiglu(sum, up);
        const int64_t idx = batch * M * N + i * args->ldc + j;
        floats(args->c)[idx] = epi(sum, idx, j);
      }
    }
  }
  return 0;
}

}  // namespace tt
