#pragma once

#include <functional>

#include "runtime/device_executor.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/output_validation.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::bench {

// Poisons the output, runs `run` once (it must leave the output ready for a
// copy on the legacy default stream), reads the output back and checks it
// against `reference` (the problem's, whole or on sampled rows) as the
// worker does.
tuner::OutputCheck RunAndCheck(runtime::DeviceExecutor& executor,
                               const runtime::KernelArguments& args,
                               const tuner::ProblemInputs& problem,
                               const tuner::Reference& reference, double tolerance,
                               const std::function<void()>& run);

}  // namespace tiletune::bench
