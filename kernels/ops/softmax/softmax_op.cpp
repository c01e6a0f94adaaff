#include "kernels/ops/softmax/softmax_op.h"

#include <algorithm>
#include <cmath>

#include "kernels/rows/row_op_args.h"

namespace tiletune::kernels::softmax {
namespace {

void Softmax(const RowReferenceArgs&, std::span<const double> x, std::span<double> y) {
  const double max = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (size_t c = 0; c < x.size(); ++c) sum += y[c] = std::exp(x[c] - max);
  for (double& v : y) v /= sum;
}

}  // namespace

const OpSpec& SoftmaxOp() {
  static const OpSpec kSpec = rows::RowReductionSpec(kOpName, {}, Softmax);
  return kSpec;
}

}  // namespace tiletune::kernels::softmax
