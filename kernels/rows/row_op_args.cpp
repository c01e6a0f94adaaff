#include "kernels/rows/row_op_args.h"

#include <utility>

#include "kernels/core/kernel_key.h"

namespace tiletune::kernels::rows {

std::vector<DimArg> RowDims() {
  return {{"rows", true, 0, "m"}, {"cols", true, 0, "n"}};
}

TensorArg RowInput() {
  return {"x", TensorRole::kInput, {"rows", "cols"}, "a", LayoutRule::kRowOnly};
}

TensorArg RowOutput() {
  return {"y", TensorRole::kOutput, {"rows", "cols"}, "out"};
}

TensorArg ColumnTensor(std::string_view name, TensorRole role, std::string_view abi_field) {
  return {name, role, {"cols"}, abi_field};
}

int64_t RowReductionFlops(const v1::KernelKey& key) {
  constexpr int64_t kPerElement = 5;
  return kPerElement * DimSize(key, "rows").value_or(0) * DimSize(key, "cols").value_or(0);
}

OpSpec RowReductionSpec(std::string_view name, std::vector<TensorArg> column_tensors,
                        RowReference reference) {
  std::vector<TensorArg> tensors = {RowInput()};
  for (TensorArg& t : column_tensors) tensors.push_back(std::move(t));
  tensors.push_back(RowOutput());
  return OpSpec{
      .name = name,
      .fusion = FusionKind::kRowReduction,
      .abi_version = 1,
      .dims = RowDims(),
      .tensors = std::move(tensors),
      .flops = RowReductionFlops,
      .row_reference = reference,
  };
}

}  // namespace tiletune::kernels::rows
