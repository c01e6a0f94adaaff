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

// A problem of `batch` entries; bhsd, no lse and no mask unless asked.
inline Sm90aAttentionProblem Problem(int64_t batch, int64_t q_heads, int64_t kv_heads,
                                     int64_t q_len, int64_t kv_len, int64_t head_dim,
                                     bool causal = false, bool bshd = false, bool lse = false) {
  Sm90aAttentionProblem p;
  p.batch = batch;
  p.q_heads = q_heads;
  p.kv_heads = kv_heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_dim = head_dim;
  p.causal = causal;
  p.bshd = bshd;
  p.write_lse = lse;
  return p;
}

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
