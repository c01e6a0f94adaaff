#pragma once

#include <cstdint>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::tuner {

// rmsnorm/layernorm epsilon: keys carry none, so every kernel and the
// reference use this one.
inline constexpr double kNormEpsilon = 1e-5;

// The inputs of one problem, drawn from a seed, as the kernel and the
// reference both see them. Shapes follow tt_host_args: dense tensors, batched
// gemm operands one after another; row ops use m = rows, n = cols.
struct ProblemInputs {
  v1::KernelKey key;  // normalized
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool a_col_major = false, b_col_major = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  std::vector<float> a, b;           // gemm A, B; row ops: x in a
  std::vector<float> weight, shift;  // norms: gamma (rmsnorm, layernorm), beta (layernorm)
  // Per prologue op, then per chain op (the kernels' chain argument order);
  // empty where the op has no tensor.
  std::vector<std::vector<float>> chain_tensors;
  std::vector<double> chain_scalars;  // likewise; scale's value
  int64_t output_elements = 0;
  double eps = kNormEpsilon;
};

// Draws the inputs of `key` from `seed`: uniform in [-1, 1] without values
// near zero (a zero input hides a kernel that ignores it). A `scale` whose
// key value is 0 gets a drawn value, so validation still sees the op.
// Tensors are rounded to the element type the kernel reads them in (the
// input dtype; a chain tensor's own dtype). Throws std::invalid_argument
// when the key is invalid or uses an element type other than f32/f16/bf16.
ProblemInputs MakeProblemInputs(const v1::KernelKey& key, uint64_t seed);

}  // namespace tiletune::tuner
