#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::softmax {

inline constexpr std::string_view kOpName = "softmax";

// softmax: y = softmax(x) along each row of x[rows, cols], then the chain.
const OpSpec& SoftmaxOp();

}  // namespace tiletune::kernels::softmax
