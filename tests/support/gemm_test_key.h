#pragma once

#include <cstdint>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::testing {

// The factor of every `scale` op in GemmTestKey's chains.
inline constexpr double kTestScale = 0.75;

// One op of a test key's epilogue chain and the dtype of its tensor
// (unspecified: the key's output dtype; a cast's: the cast's target).
struct TestChainOp {
  TestChainOp(const char* name, v1::DType tensor_dtype = v1::DTYPE_UNSPECIFIED)
      : op(name), dtype(tensor_dtype) {}
  const char* op;
  v1::DType dtype;
};

// A normalized GEMM key: A (m x k) and B (k x n), row- or column-major,
// `batch` entries, `in` operands, an `out` result and an epilogue chain. A
// cast without a dtype casts to `out`; a scale multiplies by kTestScale.
v1::KernelKey GemmTestKey(int64_t m, int64_t n, int64_t k, int64_t batch, v1::DType in,
                          v1::DType out, bool a_col_major, bool b_col_major,
                          const std::vector<TestChainOp>& chain = {});

// `key` allowing tf32 tensor-core products for its f32 operands.
v1::KernelKey AllowingTf32(v1::KernelKey key);

// `key` gated by SwiGLU: silu(A*B) * (A*B_up), then its chain.
v1::KernelKey GatedBySwiglu(v1::KernelKey key);

}  // namespace tiletune::testing
