#pragma once

#include <optional>
#include <string>

#include "kernels/tt/kernel_args.h"
#include "runtime/device_executor.h"

namespace tiletune::runtime {

// Fills the one by-value parameter of a generated GPU kernel from the
// problem's arguments (the same on CUDA and HIP); the reason when the chain
// is longer than the struct holds.
std::optional<std::string> BindKernelArgs(const KernelArguments& args, tt_kernel_args* raw);

}  // namespace tiletune::runtime
