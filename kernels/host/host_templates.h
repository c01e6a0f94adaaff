#pragma once

#include <memory>

#include "kernels/kernel_template.h"

namespace tiletune::kernels::host {

// The kernel templates of the host (CPU) backend, one per op.
std::unique_ptr<KernelTemplate> MakeHostGemmBlocked();
std::unique_ptr<KernelTemplate> MakeHostSoftmaxRows();
std::unique_ptr<KernelTemplate> MakeHostRmsnormRows();
std::unique_ptr<KernelTemplate> MakeHostLayernormRows();
std::unique_ptr<KernelTemplate> MakeHostElementwiseRows();

// Name of every host baseline: the straightforward kernel for the op + chain.
inline constexpr const char* kHostBaselineName = "host-naive";

}  // namespace tiletune::kernels::host
