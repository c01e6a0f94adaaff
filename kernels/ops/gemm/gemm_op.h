#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::gemm {

inline constexpr std::string_view kOpName = "gemm";

// gemm: C[batch, m, n] = A[batch, m, k] B[batch, k, n], then the chain.
const OpSpec& GemmOp();

}  // namespace tiletune::kernels::gemm
