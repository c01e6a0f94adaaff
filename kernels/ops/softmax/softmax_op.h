#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::softmax {

inline constexpr std::string_view kOpName = "softmax";

const OpSpec& SoftmaxOp();

}  // namespace tiletune::kernels::softmax
