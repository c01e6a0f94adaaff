#pragma once

#include <vector>

#include "kernels/core/kernel_key.h"
#include "tiletune/v1/jobs.pb.h"

namespace tiletune::server {

// The single-kernel keys a job spec's kernels stand for: every op graph key
// replaced by the kernels of its fusion plan (kernels/fusion), all
// normalized, and a kernel that repeats (by canonical string) kept once, so a
// job tunes each distinct kernel once. The spec's keys must be valid.
std::vector<v1::KernelKey> PlannedJobKernels(const v1::JobSpec& spec,
                                             const kernels::KeyLimits& limits);

}  // namespace tiletune::server
