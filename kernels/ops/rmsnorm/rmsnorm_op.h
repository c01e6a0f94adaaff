#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::rmsnorm {

inline constexpr std::string_view kOpName = "rmsnorm";

// rmsnorm: y = x / rms(x) * w along each row of x[rows, cols], w[cols].
const OpSpec& RmsnormOp();

}  // namespace tiletune::kernels::rmsnorm
