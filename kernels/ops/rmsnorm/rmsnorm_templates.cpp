#include "kernels/ops/rmsnorm/rmsnorm_templates.h"

#include "kernels/ops/rmsnorm/rmsnorm_op.h"
#include "kernels/rows/gpu_row_template.h"
#include "kernels/rows/host_row_template.h"

namespace tiletune::kernels::rmsnorm {

std::unique_ptr<KernelTemplate> MakeHostRows() {
  return host::MakeHostRowTemplate({"host_rmsnorm_rows",
                                    kOpName,
                                    "ops/rmsnorm/cpu/rmsnorm_rows.h",
                                    "tt::rmsnorm_rows",
                                    "tt::rmsnorm_naive",
                                    {}});
}

std::unique_ptr<KernelTemplate> MakeGpuRows(const gpu::GpuVendor& vendor) {
  return gpu::MakeGpuRowTemplate({"gpu_rmsnorm_rows",
                                  kOpName,
                                  "ops/rmsnorm/device/rmsnorm_rows.h",
                                  "tt::rmsnorm_rows",
                                  "tt::rmsnorm_naive",
                                  {}},
                                 vendor);
}

}  // namespace tiletune::kernels::rmsnorm
