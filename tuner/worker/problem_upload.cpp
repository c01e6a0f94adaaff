#include "tuner/worker/problem_upload.h"

#include <cstddef>
#include <vector>

#include "kernels/core/kernel_key.h"
#include "tuner/worker/element_codec.h"

namespace tiletune::tuner {
namespace {

runtime::DeviceBuffer Upload(runtime::DeviceExecutor& executor, const std::vector<float>& data,
                             v1::DType dtype) {
  if (data.empty()) return {};
  const std::vector<std::byte> bytes = EncodeElements(data, dtype);
  runtime::DeviceBuffer buffer = executor.Allocate(bytes.size());
  executor.CopyIn(buffer, bytes.data(), bytes.size());
  return buffer;
}

}  // namespace

runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor, const ProblemInputs& p) {
  const v1::DType in = p.key.input_dtype();
  runtime::KernelArguments args;
  args.a = Upload(executor, p.a, in);
  args.b = Upload(executor, p.b, in);
  args.weight = Upload(executor, p.weight, in);
  args.shift = Upload(executor, p.shift, in);
  const std::vector<v1::ChainOp> ops = kernels::ChainArgumentOps(p.key);
  for (size_t i = 0; i < ops.size(); ++i) {
    args.chain_tensors.push_back(Upload(executor, p.chain_tensors[i], ops[i].dtype()));
  }
  args.chain_scalars = p.chain_scalars;
  args.out = executor.Allocate(static_cast<size_t>(p.output_elements) *
                               ElementBytes(p.key.output_dtype()));
  if (p.key.write_prologue_output()) {
    args.prologue_out =
        executor.Allocate(static_cast<size_t>(p.output_elements) * ElementBytes(in));
  }
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.batch = p.batch;
  args.lda = p.lda;
  args.ldb = p.ldb;
  args.ldc = p.ldc;
  args.eps = p.eps;
  return args;
}

}  // namespace tiletune::tuner
