#pragma once

// Test kernels of the sm_90a attention families: one entry per variant,
// written by hand (a Config, a pass-through epilogue, the family's device
// function), so they compile and run without the op's key and catalog.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/attention/attention_sm90a_space.h"

namespace tiletune::kernels::attention::testing {

enum class Family { kTmaWs, kDecode };

struct AttentionTestKernel {
  Family family = Family::kTmaWs;
  Variant variant;
  KernelSource source;  // entry, code, headers, sm_90a options
  int64_t threads = 0;
  int64_t shared_bytes = 0;
};

// The kernel of `variant` of `family` for the problem's head_dim, flags and
// a bf16 (or f16) input and output.
AttentionTestKernel TestKernel(Family family, const Sm90aAttentionProblem& problem,
                               const Variant& variant, bool f16 = false);

// Every variant of the family's space for the problem on the H200.
std::vector<AttentionTestKernel> TestKernels(Family family, const Sm90aAttentionProblem& problem,
                                             bool f16 = false);

}  // namespace tiletune::kernels::attention::testing
