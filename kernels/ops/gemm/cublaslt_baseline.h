#pragma once

#include <string_view>

#include "kernels/core/kernel_template.h"

namespace tiletune::kernels::gemm {

inline constexpr std::string_view kCublasLtName = "cublasLt";

// The NVIDIA baseline of every GEMM key: cuBLASLt, called by the worker.
// A key with a chain has the pass that applies it after the library's plain
// product ("cublasLt+gemm_epilogue_pass"), as has a gated key: two library
// calls (b, then b_up) and the pass that gates and applies the chain; where the library's own
// epilogue computes the chain too (blas_epilogue.h), the call alone competes with it
// ("cublasLt"), as it is all there is for a key without a chain.
Baseline CublasLtBaseline(const v1::KernelKey& key);

}  // namespace tiletune::kernels::gemm
