#include "kernels/ops/rmsnorm/rmsnorm_op.h"

#include <cmath>

#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::rmsnorm {
namespace {

void Rmsnorm(const RowReferenceArgs& p, std::span<const double> x, std::span<double> y) {
  double squares = 0;
  for (double v : x) squares += v * v;
  const double rms = std::sqrt(squares / static_cast<double>(x.size()) + p.eps);
  for (size_t c = 0; c < x.size(); ++c) y[c] = x[c] / rms * p.weight[c];
}

}  // namespace

const OpSpec& RmsnormOp() {
  static const OpSpec kSpec = rows::RowReductionSpec(
      kOpName, {rows::ColumnTensor("w", TensorRole::kWeight, "weight")}, Rmsnorm);
  return kSpec;
}

}  // namespace tiletune::kernels::rmsnorm
