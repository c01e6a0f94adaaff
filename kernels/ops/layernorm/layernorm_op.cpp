#include "kernels/ops/layernorm/layernorm_op.h"

#include <cmath>

#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::layernorm {
namespace {

void Layernorm(const RowReferenceArgs& p, std::span<const double> x, std::span<double> y) {
  double sum = 0;
  for (double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  double squares = 0;
  for (double v : x) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(x.size()) + p.eps);
  for (size_t c = 0; c < x.size(); ++c) y[c] = (x[c] - mean) / stddev * p.weight[c] + p.shift[c];
}

}  // namespace

const OpSpec& LayernormOp() {
  static const OpSpec kSpec =
      rows::RowReductionSpec(kOpName,
                             {rows::ColumnTensor("w", TensorRole::kWeight, "weight"),
                              rows::ColumnTensor("b", TensorRole::kShift, "shift")},
                             Layernorm);
  return kSpec;
}

}  // namespace tiletune::kernels::layernorm
