// The fusion planner: splits an op graph into the kernels our templates
// serve, by rule, and says why each kernel ends where it does.
//   matmul + element-wise epilogue            -> gemm with chain
//   element-wise prologue + row reduction
//     (softmax, rmsnorm, layernorm) + epilogue -> the row op with prologue and chain
//   element-wise ops alone                    -> elementwise with chain
//   matmul_t(q, k) -> [scale] -> [add(mask) | causal_mask] -> softmax
//     -> matmul(., v) + epilogue              -> attention with chain
// Attention-shaped ops the attention kernel cannot take (a head_dim other
// than 64, 128, 256, an intermediate wanted as an output, a per-key bias)
// plan as their matmuls and softmax, the first kernel's split reason saying
// why; a causal_mask outside attention cannot be planned at all.
// A kernel ends before a matmul (GEMM templates read A as stored), before a
// row reduction that would follow a GEMM (a GEMM tile does not own whole
// rows) or another reduction, after a cast, after an intermediate the caller
// wants as an output, and when its prologue and chain are full. The one
// wanted intermediate that does not end a kernel is a row op's input made by
// its prologue (x + residual before rmsnorm): the row kernel writes it too
// (KernelKey.write_prologue_output).
#pragma once

#include "kernels/core/kernel_key.h"

namespace tiletune::kernels::fusion {

// The plan of a graph key. Each kernel's key is in single-kernel form and
// normalized, so a graph that is one kernel gets the same canonical string
// (and database record) as the equivalent op + chain key. Throws
// std::invalid_argument naming the field when the graph is invalid.
v1::FusionPlan PlanFusion(const v1::KernelKey& graph_key, const KeyLimits& limits);

}  // namespace tiletune::kernels::fusion
