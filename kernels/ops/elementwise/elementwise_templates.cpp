#include "kernels/ops/elementwise/elementwise_templates.h"

#include "kernels/ops/elementwise/elementwise_op.h"
#include "kernels/rows/host_row_template.h"

namespace tiletune::kernels::elementwise {

std::unique_ptr<KernelTemplate> MakeHostRows() {
  return host::MakeHostRowTemplate({"host_elementwise_rows",
                                    kOpName,
                                    "ops/elementwise/cpu/elementwise.h",
                                    "tt::elementwise_rows",
                                    "tt::elementwise_naive",
                                    {},
                                    false});
}

}  // namespace tiletune::kernels::elementwise
