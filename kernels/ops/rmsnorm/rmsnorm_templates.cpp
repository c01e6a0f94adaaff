#include "kernels/ops/rmsnorm/rmsnorm_templates.h"

#include "kernels/ops/rmsnorm/rmsnorm_op.h"
#include "kernels/rows/gpu_row_template.h"
#include "kernels/rows/host_row_template.h"

namespace tiletune::kernels::rmsnorm {

std::unique_ptr<KernelTemplate> MakeHostRows() {
  return host::MakeHostRowTemplate(host::RowKernelDefinition(kOpName));
}

std::unique_ptr<KernelTemplate> MakeGpuRows(const gpu::GpuVendor& vendor) {
  return gpu::MakeGpuRowTemplate(gpu::RowKernelDefinition(kOpName), vendor);
}

}  // namespace tiletune::kernels::rmsnorm
