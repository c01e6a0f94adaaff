#pragma once

#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::layernorm {

inline constexpr std::string_view kOpName = "layernorm";

const OpSpec& LayernormOp();

}  // namespace tiletune::kernels::layernorm
