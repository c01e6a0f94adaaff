#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::elementwise {

inline constexpr std::string_view kOpName = "elementwise";

const OpSpec& ElementwiseOp();

}  // namespace tiletune::kernels::elementwise
