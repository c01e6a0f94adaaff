#include "bench/gpu/gemm/device_problem.h"

#include <cstddef>
#include <vector>

#include "bench/gpu/gemm/sampled_check.h"
#include "tuner/worker/element_codec.h"

namespace tiletune::bench {
namespace {

runtime::DeviceBuffer Upload(runtime::DeviceExecutor& executor, const std::vector<float>& values,
                             v1::DType dtype) {
  if (values.empty()) return {};
  const std::vector<std::byte> bytes = tuner::EncodeElements(values, dtype);
  const runtime::DeviceBuffer buffer = executor.Allocate(bytes.size());
  executor.CopyIn(buffer, bytes.data(), bytes.size());
  return buffer;
}

// The same seed for every check, so contenders are judged on the same sample.
constexpr uint64_t kSampleSeed = 4;

}  // namespace

runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor,
                                       const tuner::ProblemInputs& p) {
  runtime::KernelArguments args;
  args.a = Upload(executor, p.a, p.key.input_dtype());
  args.b = Upload(executor, p.b, p.key.input_dtype());
  for (int i = 0; i < p.key.chain_size(); ++i) {
    args.chain_tensors.push_back(
        Upload(executor, p.chain_tensors[static_cast<size_t>(i)], p.key.chain(i).dtype()));
  }
  args.chain_scalars = p.chain_scalars;
  args.out = executor.Allocate(static_cast<size_t>(p.output_elements) *
                               tuner::ElementBytes(p.key.output_dtype()));
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.batch = p.batch;
  args.lda = p.lda;
  args.ldb = p.ldb;
  args.ldc = p.ldc;
  return args;
}

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
