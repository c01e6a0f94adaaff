#pragma once

#include <memory>

#include "kernels/core/kernel_template.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::elementwise {

// elementwise's kernel templates: the key's prologue and chain over every
// element of x, on the host (through the shared host row template) and on
// one GPU vendor (a flat vectorised kernel).
std::unique_ptr<KernelTemplate> MakeHostRows();
std::unique_ptr<KernelTemplate> MakeGpuElementwise(const gpu::GpuVendor& vendor);

}  // namespace tiletune::kernels::elementwise
