#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/device_executor.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::tuner {

// A problem's inputs as the device stores them: encoded in the key's
// dtypes (the input dtype; each chain tensor its own). Encoded once per
// problem, uploaded afresh for every kernel.
struct EncodedInputs {
  std::map<std::string, std::vector<std::byte>, std::less<>> tensors;
  std::vector<std::vector<std::byte>> chain_tensors;
};
EncodedInputs EncodeInputs(const ProblemInputs& problem);

// The inputs on the executor's device and the problem's output buffers
// (the prologue's output in the input dtype, where the key writes it): the
// arguments every kernel of that problem is launched with.
runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor,
                                       const ProblemInputs& problem, const EncodedInputs& inputs);
// Encodes, then uploads: for a problem launched once.
runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor,
                                       const ProblemInputs& problem);

}  // namespace tiletune::tuner
