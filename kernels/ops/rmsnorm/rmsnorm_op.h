#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::rmsnorm {

inline constexpr std::string_view kOpName = "rmsnorm";

const OpSpec& RmsnormOp();

}  // namespace tiletune::kernels::rmsnorm
