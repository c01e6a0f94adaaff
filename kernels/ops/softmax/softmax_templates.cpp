#include "kernels/ops/softmax/softmax_templates.h"

#include "kernels/ops/softmax/softmax_op.h"
#include "kernels/rows/gpu_row_template.h"
#include "kernels/rows/host_row_template.h"

namespace tiletune::kernels::softmax {

std::unique_ptr<KernelTemplate> MakeHostRows() {
  return host::MakeHostRowTemplate(
      host::RowKernelDefinition(kOpName, {{"online", {0, 1}}, {"fast_exp", {0, 1}}}));
}

std::unique_ptr<KernelTemplate> MakeGpuRows(const gpu::GpuVendor& vendor) {
  return gpu::MakeGpuRowTemplate(gpu::RowKernelDefinition(kOpName), vendor);
}

}  // namespace tiletune::kernels::softmax
