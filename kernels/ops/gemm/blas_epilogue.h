#pragma once

#include <optional>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels::gemm {

// The activations a BLASLt-style epilogue (cuBLASLt, hipBLASLt) applies.
// Their GELU is the tanh form; gelu_erf and silu have no counterpart.
enum class BlasActivation { kNone, kRelu, kGeluTanh };

// How the key's chain maps onto the library's own epilogue, which computes
//   D = activation(alpha * A*B + beta * C + bias)
// with C and the bias in the output dtype. The chain fits (`fused`) when it
// reads, in order: an optional leading scale (alpha), then residual_add
// (C with beta = 1) and bias in either order (sums commute), then at most
// one relu or gelu_tanh, then at most a cast to the output dtype (the store
// already rounds to it). Anything else (a scale after a sum, gelu_erf, silu,
// two activations, a tensor in another dtype...) does not fit, nor does any
// chain of a key with a gate (the library computes neither product's gate): the library
// then computes the plain product and one element-wise pass applies the
// whole chain, and every field below is empty.
struct BlasEpilogue {
  bool fused = false;
  std::optional<int> scale_op;     // chain index whose scalar is alpha
  std::optional<int> residual_op;  // chain index whose tensor is C
  std::optional<int> bias_op;      // chain index whose tensor is the bias
  BlasActivation activation = BlasActivation::kNone;
};

BlasEpilogue FoldIntoBlasEpilogue(const v1::KernelKey& key);

}  // namespace tiletune::kernels::gemm
