#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::layernorm {

inline constexpr std::string_view kOpName = "layernorm";

// layernorm: y = (x - mean) / stddev * w + b along each row of x[rows,
// cols], w and b [cols].
const OpSpec& LayernormOp();

}  // namespace tiletune::kernels::layernorm
