#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::gpu {

// What a row-reduction op (softmax, rmsnorm, layernorm) brings to the
// shared GPU row template: its names, its device header and functions, and
// its own algorithm choices. Each op's folder defines one.
struct RowKernelDefinition {
  // The op's names, by one convention: template gpu_<op>_rows, header
  // ops/<op>/device/<op>_rows.h, functions tt::<op>_rows and tt::<op>_naive.
  explicit RowKernelDefinition(std::string_view op, std::vector<Parameter> choices = {});
  std::string name, op, header, tuned, naive;
  std::vector<Parameter> algorithm;  // op-specific choices, each 0/1
};

// The GPU row template for one op: one shape of search space (block size,
// rows per block, vector width, unroll, one-pass, persistent grid) plus the
// op's choices; the naive kernel of the op is its baseline.
std::unique_ptr<KernelTemplate> MakeGpuRowTemplate(RowKernelDefinition definition,
                                                   const GpuVendor& vendor);

}  // namespace tiletune::kernels::gpu
