#pragma once

#include <vector>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::rows {

// The dims and tensors every row op shares: x[rows, cols] in a, y[rows,
// cols] in out; m = rows, n = cols.
std::vector<DimArg> RowDims();
TensorArg RowInput();
TensorArg RowOutput();
// A per-column tensor of a norm ([cols]) in `abi_field`.
TensorArg ColumnTensor(std::string_view name, TensorRole role, std::string_view abi_field);

// A row reduction's own work per element: a max, an exp, sums, a division.
int64_t RowReductionFlops(const v1::KernelKey& key);

// The spec of a row reduction (softmax, rmsnorm, layernorm): the shared
// dims, x, the op's per-column tensors, y, RowReductionFlops, ABI version 1.
OpSpec RowReductionSpec(std::string_view name, std::vector<TensorArg> column_tensors,
                        RowReference reference);

}  // namespace tiletune::kernels::rows
