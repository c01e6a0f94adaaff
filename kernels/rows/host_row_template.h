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
  std::string_view name;             // host_softmax_rows
  std::string_view op;               // softmax
  std::string header;                // ops/softmax/cpu/softmax_rows.h
  std::string tuned;                 // tt::softmax_rows
  std::string naive;                 // tt::softmax_naive
  std::vector<Parameter> algorithm;  // op-specific choices, each 0/1
  bool reduces = true;               // false: no reduction, so no reduction lanes (vec)
};

// The host row template for one op: reduction lanes, rows per task and
// threads, plus the op's choices; the op's naive kernel is its baseline.
std::unique_ptr<KernelTemplate> MakeHostRowTemplate(RowKernelDefinition definition);

}  // namespace tiletune::kernels::host
