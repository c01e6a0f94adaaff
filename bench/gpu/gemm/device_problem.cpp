#include "bench/gpu/gemm/device_problem.h"

#include <cstddef>
#include <vector>

#include "bench/gpu/gemm/sampled_check.h"
#include "tuner/worker/element_codec.h"
#include "tuner/worker/host_reference.h"

namespace tiletune::bench {
namespace {

// The same seed for every check, so contenders are judged on the same sample.
constexpr uint64_t kSampleSeed = 4;

}  // namespace

tuner::OutputCheck RunAndCheck(runtime::DeviceExecutor& executor,
                               const runtime::KernelArguments& args,
                               const tuner::ProblemInputs& problem, double tolerance,
                               int64_t max_side, const std::function<void()>& run) {
  const v1::DType dtype = problem.key.output_dtype();
  const std::vector<float> poison(static_cast<size_t>(problem.output_elements),
                                  tuner::PoisonValue());
  std::vector<std::byte> bytes = tuner::EncodeElements(poison, dtype);
  executor.CopyIn(args.out, bytes.data(), bytes.size());
  run();
  executor.CopyOut(bytes.data(), args.out, bytes.size());
  const std::vector<float> out = tuner::DecodeElements(bytes, dtype);
  // Row and element-wise ops have no cheaper sample than their whole
  // reference, which is linear in the output.
  if (problem.key.op() != "gemm") {
    return tuner::CheckOutput(out, tuner::HostReference(problem), tolerance);
  }
  return CheckSampled(problem, out, tolerance, max_side, kSampleSeed);
}

}  // namespace tiletune::bench
