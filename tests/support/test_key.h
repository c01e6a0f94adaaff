#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::testing {

// A single-kernel key as a client writes it (not normalized): `op` with
// f32 (or `dtype`) inputs, the named dims in order, and epilogue chain ops
// by name (a cast casts to f32).
v1::KernelKey TestKey(const std::string& op,
                      const std::vector<std::pair<std::string, int64_t>>& dims,
                      const std::vector<std::string>& chain = {}, v1::DType dtype = v1::DTYPE_F32);

// A row op's key: rows x cols of `op` (softmax, rmsnorm, layernorm, elementwise).
v1::KernelKey RowsTestKey(const std::string& op, int64_t rows, int64_t cols,
                          v1::DType dtype = v1::DTYPE_F32);

// A plain m x n x k GEMM's key.
v1::KernelKey GemmShapeKey(int64_t m, int64_t n, int64_t k, v1::DType dtype = v1::DTYPE_F32);

}  // namespace tiletune::testing
