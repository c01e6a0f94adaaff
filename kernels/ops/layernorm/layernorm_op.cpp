#include "kernels/ops/layernorm/layernorm_op.h"

#include <cmath>
#include <cstddef>

#include "kernels/ops/layernorm/layernorm_args.h"
#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::layernorm {
namespace {

void Layernorm(const ReferenceArgs& args, std::span<const double> x, std::span<double> y) {
  const std::span<const float> w = args.Tensor("w"), b = args.Tensor("b");
  double sum = 0;
  for (double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  double squares = 0;
  for (double v : x) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(x.size()) + args.Float("eps"));
  for (size_t c = 0; c < x.size(); ++c) y[c] = (x[c] - mean) / stddev * w[c] + b[c];
}

}  // namespace

const OpSpec& LayernormOp() {
  static const OpSpec kSpec = rows::RowReductionSpec(
      kOpName,
      {TT_LAUNCH_ABI(2, tt_layernorm_args, "ops/layernorm/layernorm_args.h"),
       {TT_ABI_FIELD(tt_layernorm_args, x, kTensor), TT_ABI_FIELD(tt_layernorm_args, w, kTensor),
        TT_ABI_FIELD(tt_layernorm_args, b, kTensor), TT_ABI_FIELD(tt_layernorm_args, y, kTensor),
        TT_ABI_FIELD(tt_layernorm_args, prologue_out, kTensor),
        TT_ABI_FIELD(tt_layernorm_args, chain, kChain),
        TT_ABI_FIELD(tt_layernorm_args, rows, kInt64),
        TT_ABI_FIELD(tt_layernorm_args, cols, kInt64), TT_ABI_FIELD(tt_layernorm_args, ldx, kInt64),
        TT_ABI_FIELD(tt_layernorm_args, ldy, kInt64),
        TT_ABI_FIELD(tt_layernorm_args, eps, kFloat32)}},
      {rows::ColumnTensor("w", TensorRole::kWeight), rows::ColumnTensor("b", TensorRole::kShift)},
      {{"eps", rows::kNormEpsilon}}, Layernorm);
  return kSpec;
}

}  // namespace tiletune::kernels::layernorm
