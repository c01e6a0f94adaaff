#pragma once

#include <functional>

#include "runtime/device_executor.h"
#include "tuner/worker/output_validation.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::bench {

// Poisons the output, runs `run` once (it must leave the output ready for a
// copy on the legacy default stream), reads the output back and checks it:
// a GEMM with CheckSampled (up to `max_side` rows and columns), other ops
// against their whole float64 reference.
tuner::OutputCheck RunAndCheck(runtime::DeviceExecutor& executor,
                               const runtime::KernelArguments& args,
                               const tuner::ProblemInputs& problem, double tolerance,
                               int64_t max_side, const std::function<void()>& run);

}  // namespace tiletune::bench
