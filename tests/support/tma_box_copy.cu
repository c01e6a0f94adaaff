// The tensor map encoders' test kernel (sm_90+): copies gemm's `a`
// [batch][m][k] (row-major, read through args.a_map) to `c` [batch][m][n]
// (n == k, a's dtype, row stride ldc) one box at a time. One thread starts
// the box's copy with the copy engine (cp.async.bulk.tensor) into shared
// memory, completing on an mbarrier; then the block writes the box's
// elements that lie inside a, each ORed with the bits of every element the
// box holds past a's edges: those must arrive as zeros
// (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), so a map that fills them otherwise
// shows in c, and nothing past the edges is written.
//
// Grid: (ceil(k / TT_TEST_BOX_INNER), ceil(m / TT_TEST_BOX_ROWS), batch);
// 128 threads. Compiled with TT_TEST_ELEMENT_BYTES (2 or 4),
// TT_TEST_BOX_INNER, TT_TEST_BOX_ROWS and TT_TEST_SWIZZLE_BYTES (0, 32, 64
// or 128; when set, the box's inner side in bytes equals it) defined.
#include "ops/gemm/gemm_args.h"

#if TT_TEST_ELEMENT_BYTES == 2
typedef unsigned short element;
#else
typedef unsigned int element;
#endif

#define TT_TEST_BOX_ELEMENTS (TT_TEST_BOX_INNER * TT_TEST_BOX_ROWS)
#define TT_TEST_BOX_BYTES (TT_TEST_BOX_ELEMENTS * TT_TEST_ELEMENT_BYTES)

// Where the copy engine put box element (row, col): with a swizzle of
// 2^B 16-byte chunks, address bits [4, 4 + B) are XORed with bits
// [7, 7 + B) (the box starts on a 1024-byte boundary).
__device__ unsigned box_offset(unsigned row, unsigned col) {
  const unsigned linear = (row * TT_TEST_BOX_INNER + col) * TT_TEST_ELEMENT_BYTES;
#if TT_TEST_SWIZZLE_BYTES == 0
  return linear;
#else
  const unsigned chunks = TT_TEST_SWIZZLE_BYTES / 16 - 1;
  return linear ^ (((linear >> 7) & chunks) << 4);
#endif
}

extern "C" __global__ void __launch_bounds__(128)
    tma_box_copy(const __grid_constant__ tt_gemm_tma_args args) {
  __shared__ __align__(1024) unsigned char box[TT_TEST_BOX_BYTES];
  __shared__ __align__(8) unsigned long long barrier;
  __shared__ unsigned outside_bits;
  const tt_gemm_args& gemm = args.gemm;
  const long long col0 = (long long)blockIdx.x * TT_TEST_BOX_INNER;
  const long long row0 = (long long)blockIdx.y * TT_TEST_BOX_ROWS;
  const unsigned batch = blockIdx.z;
  const unsigned done = (unsigned)__cvta_generic_to_shared(&barrier);
  if (threadIdx.x == 0) {
    outside_bits = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(done) : "memory");
    // The copy engine (the async proxy) must see the initialised barrier.
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(done),
                 "r"(TT_TEST_BOX_BYTES)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"((unsigned)__cvta_generic_to_shared(box)),
        "l"(&args.a_map), "r"((int)col0), "r"((int)row0), "r"(batch), "r"(done)
        : "memory");
  }
  asm volatile(
      "{\n"
      ".reg .pred landed;\n"
      "tt_test_wait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 landed, [%0], 0;\n"
      "@!landed bra tt_test_wait;\n"
      "}" ::"r"(done)
      : "memory");

  unsigned outside = 0;
  for (unsigned i = threadIdx.x; i < TT_TEST_BOX_ELEMENTS; i += blockDim.x) {
    const unsigned row = i / TT_TEST_BOX_INNER, col = i % TT_TEST_BOX_INNER;
    if (row0 + row >= gemm.m || col0 + col >= gemm.k) {
      outside |= *(const element*)(box + box_offset(row, col));
    }
  }
  atomicOr(&outside_bits, outside);
  __syncthreads();
  element* c = (element*)gemm.c + (long long)batch * gemm.m * gemm.ldc;
  for (unsigned i = threadIdx.x; i < TT_TEST_BOX_ELEMENTS; i += blockDim.x) {
    const unsigned row = i / TT_TEST_BOX_INNER, col = i % TT_TEST_BOX_INNER;
    if (row0 + row < gemm.m && col0 + col < gemm.k) {
      c[(row0 + row) * gemm.ldc + col0 + col] =
          *(const element*)(box + box_offset(row, col)) | (element)outside_bits;
    }
  }
}
