#include "kernels/ops/rmsnorm/rmsnorm_op.h"

#include <cmath>
#include <cstddef>

#include "kernels/ops/rmsnorm/rmsnorm_args.h"
#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::rmsnorm {
namespace {

void Rmsnorm(const ReferenceArgs& args, std::span<const double> x, std::span<double> y) {
  const std::span<const float> w = args.Tensor("w");
  double squares = 0;
  for (double v : x) squares += v * v;
  const double rms = std::sqrt(squares / static_cast<double>(x.size()) + args.Float("eps"));
  for (size_t c = 0; c < x.size(); ++c) y[c] = x[c] / rms * w[c];
}

}  // namespace

const OpSpec& RmsnormOp() {
  static const OpSpec kSpec = rows::RowReductionSpec(
      kOpName,
      {TT_LAUNCH_ABI(2, tt_rmsnorm_args, "ops/rmsnorm/rmsnorm_args.h"),
       {TT_ABI_FIELD(tt_rmsnorm_args, x, kTensor), TT_ABI_FIELD(tt_rmsnorm_args, w, kTensor),
        TT_ABI_FIELD(tt_rmsnorm_args, y, kTensor),
        TT_ABI_FIELD(tt_rmsnorm_args, prologue_out, kTensor),
        TT_ABI_FIELD(tt_rmsnorm_args, chain, kChain), TT_ABI_FIELD(tt_rmsnorm_args, rows, kInt64),
        TT_ABI_FIELD(tt_rmsnorm_args, cols, kInt64), TT_ABI_FIELD(tt_rmsnorm_args, ldx, kInt64),
        TT_ABI_FIELD(tt_rmsnorm_args, ldy, kInt64), TT_ABI_FIELD(tt_rmsnorm_args, eps, kFloat32)}},
      {rows::ColumnTensor("w", TensorRole::kWeight)}, {{"eps", rows::kNormEpsilon}}, Rmsnorm);
  return kSpec;
}

}  // namespace tiletune::kernels::rmsnorm
