#include "kernels/ops/gemm/blas_epilogue.h"

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_op.h"

namespace tiletune::kernels::gemm {

BlasEpilogue FoldIntoBlasEpilogue(const v1::KernelKey& raw) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  if (Gated(key)) return {};
  const v1::DType out = key.output_dtype();
  BlasEpilogue fold;
  bool activated = false, cast = false;
  for (int i = 0; i < key.chain_size(); ++i) {
    const v1::ChainOp& op = key.chain(i);
    // Nothing but the output rounding may follow a cast or the activation.
    const bool after_sums = activated || cast;
    if (op.op() == "scale" && i == 0) {
      fold.scale_op = i;
    } else if (op.op() == "residual_add" && !after_sums && !fold.residual_op && op.dtype() == out) {
      fold.residual_op = i;
    } else if (op.op() == "bias" && !after_sums && !fold.bias_op && op.dtype() == out) {
      fold.bias_op = i;
    } else if ((op.op() == "relu" || op.op() == "gelu_tanh") && !after_sums) {
      fold.activation = op.op() == "relu" ? BlasActivation::kRelu : BlasActivation::kGeluTanh;
      activated = true;
    } else if (op.op() == "cast" && !cast && op.dtype() == out) {
      cast = true;
    } else {
      return {};
    }
  }
  fold.fused = true;
  return fold;
}

}  // namespace tiletune::kernels::gemm
