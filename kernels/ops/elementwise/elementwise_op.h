#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::elementwise {

inline constexpr std::string_view kOpName = "elementwise";

// elementwise: the prologue and chain over x[rows, cols], nothing else.
const OpSpec& ElementwiseOp();

}  // namespace tiletune::kernels::elementwise
