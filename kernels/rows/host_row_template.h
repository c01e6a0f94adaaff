#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "kernels/source/host_source.h"

namespace tiletune::kernels::host {

// What a row op (softmax, rmsnorm, layernorm, elementwise) brings to the
// shared host row template. Each op's folder defines one.
struct RowKernelDefinition {
  // The op's names, by one convention: template host_<op>_rows, header
  // ops/<op>/cpu/<op>_rows.h, functions tt::<op>_rows and tt::<op>_naive.
  explicit RowKernelDefinition(std::string_view op, std::vector<Parameter> choices = {},
                               bool reduces = true);
  std::string name, op, header, tuned, naive;
  std::vector<Parameter> algorithm;  // op-specific choices, each 0/1
  bool reduces;                      // false: no reduction, so no reduction lanes (vec)
};

// The host row template for one op: reduction lanes, rows per task and
// threads, plus the op's choices; the op's naive kernel is its baseline.
std::unique_ptr<KernelTemplate> MakeHostRowTemplate(RowKernelDefinition definition);

}  // namespace tiletune::kernels::host
