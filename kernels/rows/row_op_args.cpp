#include "kernels/rows/row_op_args.h"

#include <utility>

#include "kernels/core/kernel_key.h"

namespace tiletune::kernels::rows {

std::vector<DimArg> RowDims() {
  return {{"rows", true, 0}, {"cols", true, 0}};
}

TensorArg RowInput() {
  return {"x", TensorRole::kInput, {"rows", "cols"}, LayoutRule::kRowOnly};
}

TensorArg RowOutput() {
  return {"y", TensorRole::kOutput, {"rows", "cols"}};
}

TensorArg ColumnTensor(std::string_view name, TensorRole role) {
  return {name, role, {"cols"}};
}

void DenseRowLeadingDims(const v1::KernelKey& key, NamedInts& ints) {
  ints["ldx"] = ints["ldy"] = *DimSize(key, "cols");
}

int64_t RowReductionFlops(const v1::KernelKey& key) {
  constexpr int64_t kPerElement = 5;
  return kPerElement * DimSize(key, "rows").value_or(0) * DimSize(key, "cols").value_or(0);
}

OpSpec RowReductionSpec(std::string_view name, LaunchAbi abi, std::vector<TensorArg> column_tensors,
                        std::vector<std::pair<std::string_view, double>> scalars,
                        RowReference reference) {
  std::vector<TensorArg> tensors = {RowInput()};
  for (TensorArg& t : column_tensors) tensors.push_back(std::move(t));
  tensors.push_back(RowOutput());
  return OpSpec{
      .name = name,
      .fusion = FusionKind::kRowReduction,
      .abi = std::move(abi),
      .dims = RowDims(),
      .tensors = std::move(tensors),
      .flops = RowReductionFlops,
      .leading_dims = DenseRowLeadingDims,
      .scalars = std::move(scalars),
      .row_reference = reference,
  };
}

}  // namespace tiletune::kernels::rows
