#include "kernels/ops/elementwise/elementwise_templates.h"

#include "kernels/ops/elementwise/elementwise_op.h"
#include "kernels/rows/host_row_template.h"

namespace tiletune::kernels::elementwise {

// No reduction: the rows are only walked, so no reduction lanes.
std::unique_ptr<KernelTemplate> MakeHostRows() {
  return host::MakeHostRowTemplate(host::RowKernelDefinition(kOpName, {}, false));
}

}  // namespace tiletune::kernels::elementwise
