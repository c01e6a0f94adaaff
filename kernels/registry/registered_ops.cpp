// The ops of this binary: the one list a new op is added to (see
// docs/adding-an-op.md). It sits above kernels/ops/ so that the arrows
// point down: the registry includes the ops, the ops include the core.
#include "kernels/core/op_registry.h"
#include "kernels/ops/attention/attention_op.h"
#include "kernels/ops/elementwise/elementwise_op.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/layernorm/layernorm_op.h"
#include "kernels/ops/rmsnorm/rmsnorm_op.h"
#include "kernels/ops/softmax/softmax_op.h"

namespace tiletune::kernels {

const std::vector<const OpSpec*>& RegisteredOps() {
  static const std::vector<const OpSpec*> kOps = {
      &gemm::GemmOp(),           &softmax::SoftmaxOp(),         &rmsnorm::RmsnormOp(),
      &layernorm::LayernormOp(), &elementwise::ElementwiseOp(), &attention::AttentionOp(),
  };
  return kOps;
}

}  // namespace tiletune::kernels
