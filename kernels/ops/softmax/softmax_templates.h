#pragma once

#include <memory>

#include "kernels/core/kernel_template.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::softmax {

// softmax's kernel templates: rows of x reduced on the host (CPU) and on one
// GPU vendor, both through the shared row templates (kernels/rows/).
std::unique_ptr<KernelTemplate> MakeHostRows();
std::unique_ptr<KernelTemplate> MakeGpuRows(const gpu::GpuVendor& vendor);

}  // namespace tiletune::kernels::softmax
