#pragma once

#include <string_view>

#include "kernels/core/kernel_template.h"

namespace tiletune::kernels::gemm {

inline constexpr std::string_view kCublasLtName = "cublasLt";

// The NVIDIA baseline of every GEMM key: cuBLASLt, called by the worker.
// Named "cublasLt" when the library's epilogue computes the whole chain
// (blas_epilogue.h); otherwise "cublasLt+gemm_epilogue_pass", with the pass
// that applies the chain after the library's plain product.
Baseline CublasLtBaseline(const v1::KernelKey& key);

}  // namespace tiletune::kernels::gemm
