#include "kernels/ops/layernorm/layernorm_templates.h"

#include "kernels/ops/layernorm/layernorm_op.h"
#include "kernels/rows/gpu_row_template.h"
#include "kernels/rows/host_row_template.h"

namespace tiletune::kernels::layernorm {

std::unique_ptr<KernelTemplate> MakeHostRows() {
  return host::MakeHostRowTemplate(host::RowKernelDefinition(kOpName, {{"welford", {0, 1}}}));
}

std::unique_ptr<KernelTemplate> MakeGpuRows(const gpu::GpuVendor& vendor) {
  return gpu::MakeGpuRowTemplate(gpu::RowKernelDefinition(kOpName, {{"welford", {0, 1}}}), vendor);
}

}  // namespace tiletune::kernels::layernorm
