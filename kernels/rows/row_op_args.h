#pragma once

#include <vector>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::rows {

// The dims and tensors every row op shares: x[rows, cols] and y[rows, cols].
std::vector<DimArg> RowDims();
TensorArg RowInput();
TensorArg RowOutput();
// A per-column tensor of a norm ([cols]).
TensorArg ColumnTensor(std::string_view name, TensorRole role);

// ldx = ldy = cols: the leading dimensions of a row op's dense x and y.
void DenseRowLeadingDims(const v1::KernelKey& key, NamedInts& ints);

// A row reduction's own work per element: a max, an exp, sums, a division.
int64_t RowReductionFlops(const v1::KernelKey& key);

// The epsilon the norms run with: keys carry none, so every kernel and the
// reference use this one.
inline constexpr double kNormEpsilon = 1e-5;

// The spec of a row reduction (softmax, rmsnorm, layernorm): the shared
// dims, x, the op's per-column tensors, y, its launch ABI and runtime
// scalars, RowReductionFlops.
OpSpec RowReductionSpec(std::string_view name, LaunchAbi abi, std::vector<TensorArg> column_tensors,
                        std::vector<std::pair<std::string_view, double>> scalars,
                        RowReference reference);

}  // namespace tiletune::kernels::rows
