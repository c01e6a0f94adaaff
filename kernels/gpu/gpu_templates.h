#pragma once

#include <memory>

#include "gpu_source.h"
#include "kernels/kernel_template.h"

namespace tiletune::kernels::gpu {

// The kernel templates of the GPU backends, one per op; the same template
// serves CUDA and HIP, built for the vendor's warp size.
std::unique_ptr<KernelTemplate> MakeGpuGemmTiled(const GpuVendor& vendor);
std::unique_ptr<KernelTemplate> MakeGpuSoftmaxRows(const GpuVendor& vendor);
std::unique_ptr<KernelTemplate> MakeGpuRmsnormRows(const GpuVendor& vendor);
std::unique_ptr<KernelTemplate> MakeGpuLayernormRows(const GpuVendor& vendor);
std::unique_ptr<KernelTemplate> MakeGpuElementwise(const GpuVendor& vendor);

}  // namespace tiletune::kernels::gpu
