#include "bench/gpu/gemm/device_problem.h"

#include <cstddef>
#include <vector>

#include "bench/gpu/gemm/sampled_check.h"
#include "tuner/worker/element_codec.h"

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
  return CheckSampled(problem, tuner::DecodeElements(bytes, dtype), tolerance, max_side,
                      kSampleSeed);
}

}  // namespace tiletune::bench
