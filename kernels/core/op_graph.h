// An op graph key (KernelKey.ops) checked and resolved: every op with the
// shapes and types of what it reads and writes, so the planner can group ops
// without re-deriving them. In the core beside kernel_key: checking a graph
// key is part of checking a key; the planner (kernels/fusion/) builds on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kernels/core/kernel_key.h"
#include "kernels/core/op_spec.h"

namespace tiletune::kernels::fusion {

// What an op does to the tensor flowing along the chain: matmul starts from
// a [M, K] x [K, N] product (matmul_t from [M, K] x [N, K]ᵀ), a row
// reduction (the registry's row ops) reduces along the last dimension, add,
// scale, relu, gelu_tanh, gelu_erf, silu and cast are element-wise, and
// causal_mask (hides [i, j] where j > i + N - M, bottom-right aligned) runs
// only inside attention, the one kernel the planner makes of
// matmul_t -> [scale] -> [add(mask) | causal_mask] -> softmax -> matmul.
using OpKind = FusionKind;

struct ResolvedOp {
  int index = 0;  // in KernelKey.ops
  OpKind kind = OpKind::kElementwise;
  std::string op;  // as in the graph: matmul, add, scale, softmax, ...
  // The tensor the op transforms (for matmul: A) and what it writes.
  int64_t rows = 0,
          cols = 0;           // of the output; matmul's input is [rows, k], swiglu's [rows, 2 cols]
  int64_t k = 0;              // matmul only
  bool b_transposed = false;  // matmul_t: B is stored [N, K]
  v1::DType input_dtype = v1::DTYPE_UNSPECIFIED;
  v1::DType output_dtype = v1::DTYPE_UNSPECIFIED;
  // add: true when the other operand is one value per column (a bias).
  bool per_column = false;
  v1::DType other_dtype = v1::DTYPE_UNSPECIFIED;  // add's other operand
  double scalar = 0;
  std::string output;
  bool output_wanted = false;  // listed in KernelKey.outputs (or the last op)
};

struct ResolvedGraph {
  std::vector<ResolvedOp> ops;
};

// Resolves a graph key: op names and arities, tensors declared once and used
// as declared, each op reading the previous op's output, dimensions and
// dtypes that agree along the chain, limits. Errors name the field
// ("key.ops[2].inputs[1]"). The key's shape entries were checked already.
std::variant<ResolvedGraph, FieldError> ResolveOpGraph(const v1::KernelKey& key,
                                                       const KeyLimits& limits,
                                                       const std::string& prefix);

std::optional<FieldError> ValidateOpGraph(const v1::KernelKey& key, const KeyLimits& limits,
                                          const std::string& prefix);

}  // namespace tiletune::kernels::fusion
