#pragma once

#include "runtime/device_executor.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::tuner {

// A problem's inputs on the executor's device, encoded in the key's dtypes
// (the input dtype; each chain tensor its own), and its output buffers (the
// prologue's output in the input dtype, where the key writes it): the
// arguments every kernel of that problem is launched with.
runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor,
                                       const ProblemInputs& problem);

}  // namespace tiletune::tuner
