#include "kernels/ops/elementwise/elementwise_op.h"

#include <algorithm>
#include <cstddef>

#include "kernels/ops/elementwise/elementwise_args.h"
#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::elementwise {
namespace {

// The op itself passes x through: its prologue and chain are its work.
void PassThrough(const ReferenceArgs&, std::span<const double> x, std::span<double> y) {
  std::copy(x.begin(), x.end(), y.begin());
}

int64_t NoFlops(const v1::KernelKey&) {
  return 0;
}

// Built apart from the spec: GCC 12 warns of a maybe-uninitialized vector
// when it is nested in the spec's designated initializer.
LaunchAbi LaunchAbiV2() {
  return {
      TT_LAUNCH_ABI(2, tt_elementwise_args, "ops/elementwise/elementwise_args.h"),
      {TT_ABI_FIELD(tt_elementwise_args, x, kTensor), TT_ABI_FIELD(tt_elementwise_args, y, kTensor),
       TT_ABI_FIELD(tt_elementwise_args, chain, kChain),
       TT_ABI_FIELD(tt_elementwise_args, rows, kInt64),
       TT_ABI_FIELD(tt_elementwise_args, cols, kInt64)}};
}

}  // namespace

const OpSpec& ElementwiseOp() {
  static const OpSpec kSpec{
      .name = kOpName,
      .fusion = FusionKind::kElementwise,
      .abi = LaunchAbiV2(),
      .dims = rows::RowDims(),
      .tensors = {rows::RowInput(), rows::RowOutput()},
      .flops = NoFlops,
      .counts_chain_flops = true,
      .row_reference = PassThrough,
  };
  return kSpec;
}

}  // namespace tiletune::kernels::elementwise
