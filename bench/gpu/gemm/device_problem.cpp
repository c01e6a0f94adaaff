#include "bench/gpu/gemm/device_problem.h"

#include <cstddef>
#include <vector>

#include "kernels/core/op_registry.h"
#include "tuner/worker/element_codec.h"

namespace tiletune::bench {

tuner::OutputCheck RunAndCheck(runtime::DeviceExecutor& executor,
                               const runtime::KernelArguments& args,
                               const tuner::ProblemInputs& problem,
                               const tuner::Reference& reference, double tolerance,
                               const std::function<void()>& run) {
  const v1::DType dtype = problem.key.output_dtype();
  const runtime::DeviceBuffer& out =
      args.tensors.at(std::string(kernels::OutputTensor(*args.op).name));
  std::vector<std::byte> bytes =
      tuner::PoisonElements(static_cast<size_t>(problem.output_elements), dtype);
  executor.CopyIn(out, bytes.data(), bytes.size());
  run();
  executor.CopyOut(bytes.data(), out, bytes.size());
  return tuner::CheckOutput(bytes, dtype, reference, tolerance);
}

}  // namespace tiletune::bench
