#include "kernels/core/chain_ops.h"

namespace tiletune::kernels {

ChainTensor ChainTensorOf(const v1::ChainOp& op) {
  if (op.op() == "bias") return ChainTensor::kPerColumn;
  if (op.op() == "residual_add") return ChainTensor::kLikeOutput;
  return ChainTensor::kNone;
}

bool ReadsScalar(const v1::ChainOp& op) {
  return op.op() == "scale";
}

}  // namespace tiletune::kernels
