#include "kernels/ops/softmax/softmax_op.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/ops/softmax/softmax_args.h"
#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::softmax {
namespace {

void Softmax(const ReferenceArgs&, std::span<const double> x, std::span<double> y) {
  const double max = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (size_t c = 0; c < x.size(); ++c) sum += y[c] = std::exp(x[c] - max);
  for (double& v : y) v /= sum;
}

}  // namespace

const OpSpec& SoftmaxOp() {
  static const OpSpec kSpec = rows::RowReductionSpec(
      kOpName,
      {TT_LAUNCH_ABI(2, tt_softmax_args, "ops/softmax/softmax_args.h"),
       {TT_ABI_FIELD(tt_softmax_args, x, kTensor), TT_ABI_FIELD(tt_softmax_args, y, kTensor),
        TT_ABI_FIELD(tt_softmax_args, prologue_out, kTensor),
        TT_ABI_FIELD(tt_softmax_args, chain, kChain), TT_ABI_FIELD(tt_softmax_args, rows, kInt64),
        TT_ABI_FIELD(tt_softmax_args, cols, kInt64), TT_ABI_FIELD(tt_softmax_args, ldx, kInt64),
        TT_ABI_FIELD(tt_softmax_args, ldy, kInt64)}},
      {}, {}, Softmax);
  return kSpec;
}

}  // namespace tiletune::kernels::softmax
