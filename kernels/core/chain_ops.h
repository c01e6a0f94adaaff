#pragma once

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels {

// What a prologue or chain op reads at run time besides the value it maps:
// bias a tensor of one value per output column, residual_add a tensor
// shaped like the output (tt_chain_args.tensors), scale its scalar
// (tt_chain_args.scalars). The one home of that rule: kernels, the worker's
// inputs, byte counts and the launch ABI all ask here.
enum class ChainTensor { kNone, kPerColumn, kLikeOutput };

ChainTensor ChainTensorOf(const v1::ChainOp& op);
inline bool ReadsTensor(const v1::ChainOp& op) {
  return ChainTensorOf(op) != ChainTensor::kNone;
}
bool ReadsScalar(const v1::ChainOp& op);

}  // namespace tiletune::kernels
