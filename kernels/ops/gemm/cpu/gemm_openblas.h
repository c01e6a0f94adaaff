// The host GEMM baseline where OpenBLAS links: cblas_sgemm, then the key's
// epilogue chain as one pass over C, which is what a user without tiletune
// runs. Linked by the host backend (kLinkOpenBlasOption).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "ops/gemm/cpu/gemm_blocked.h"
#include "ops/gemm/gemm_args.h"
#include "tt/host/abi.h"
#include "tt/host/parallel.h"

// OpenBLAS's own declarations (cblas.h, LP64: blasint is int, the CBLAS
// enums are ints), written out because the CPU image carries only the
// runtime library (libopenblas0), not its headers.
extern "C" {
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
void openblas_set_num_threads(int threads);
}

namespace tt {

// CBLAS_ORDER and CBLAS_TRANSPOSE values.
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

// Output elements each thread of the chain pass gets at least: a smaller
// share costs more to start a thread for than it saves.
constexpr int64_t kChainPassElementsPerThread = int64_t{1} << 16;

// Cfg: a_col_major, b_col_major, threads (OpenBLAS's and the pass's, set on
// every call: the comparison with tuned kernels of as many threads is fair
// whatever OPENBLAS_NUM_THREADS says). Status 1 for a dimension beyond int.
template <class Cfg, class Epi>
int gemm_openblas(const tt_gemm_args* args, const Epi& epi) {
  const int64_t M = args->m, N = args->n, K = args->k;
  for (const long long dim : {args->m, args->n, args->k, args->lda, args->ldb, args->ldc}) {
    if (dim > INT_MAX) return 1;
  }
  openblas_set_num_threads(static_cast<int>(Cfg::threads));
  // Row-major C = op(A) op(B): a column-major operand is its transpose
  // stored row-major.
  const int trans_a = Cfg::a_col_major != 0 ? kCblasTrans : kCblasNoTrans;
  const int trans_b = Cfg::b_col_major != 0 ? kCblasTrans : kCblasNoTrans;
  // A gated key: the up product into its own buffer, then the pass
  // combines it with the gate's in C.
  std::vector<float> up(Cfg::gated != 0 ? static_cast<size_t>(args->batch * M * N) : 0);
  const auto product = [&](const void* b, float* c, int64_t ldc) {
    for (int64_t batch = 0; batch < args->batch; ++batch) {
      cblas_sgemm(kCblasRowMajor, trans_a, trans_b, static_cast<int>(M), static_cast<int>(N),
                  static_cast<int>(K), 1.0f, floats(args->a) + batch * M * K,
                  static_cast<int>(args->lda), floats(b) + batch * K * N,
                  static_cast<int>(args->ldb), 0.0f, c + batch * M * ldc, static_cast<int>(ldc));
    }
  };
  product(args->b, floats(args->c), args->ldc);
  if constexpr (Cfg::gated != 0) product(args->b_up, up.data(), N);
  if constexpr (!Epi::empty || Cfg::gated != 0) {
    const int64_t rows = args->batch * M;
    const int64_t threads =
        std::clamp<int64_t>(rows * N / kChainPassElementsPerThread, 1, Cfg::threads);
    tt::parallel_ranges(static_cast<int>(threads), rows, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t idx = r / M * M * N + r % M * args->ldc;
        float* c = floats(args->c) + idx;
        for (int64_t j = 0; j < N; ++j) {
          const float v = Cfg::gated != 0 ? swiglu(c[j], up[r * N + j]) : c[j];
          c[j] = epi(v, idx + j, j);
        }
      }
    });
  }
  return 0;
}

}  // namespace tt
