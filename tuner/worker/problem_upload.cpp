#include "tuner/worker/problem_upload.h"

#include <cstddef>
#include <vector>

#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"
#include "tuner/worker/element_codec.h"

namespace tiletune::tuner {
namespace {

runtime::DeviceBuffer Upload(runtime::DeviceExecutor& executor,
                             const std::vector<std::byte>& bytes) {
  if (bytes.empty()) return {};
  runtime::DeviceBuffer buffer = executor.Allocate(bytes.size());
  executor.CopyIn(buffer, bytes.data(), bytes.size());
  return buffer;
}

}  // namespace

EncodedInputs EncodeInputs(const ProblemInputs& p) {
  EncodedInputs encoded;
  for (const auto& [name, data] : p.tensors) {
    encoded.tensors[name] = EncodeElements(data, p.key.input_dtype());
  }
  const std::vector<v1::ChainOp> ops = kernels::ChainArgumentOps(p.key);
  for (size_t i = 0; i < ops.size(); ++i) {
    encoded.chain_tensors.push_back(EncodeElements(p.chain_tensors[i], ops[i].dtype()));
  }
  return encoded;
}

runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor, const ProblemInputs& p) {
  return UploadProblem(executor, p, EncodeInputs(p));
}

runtime::KernelArguments UploadProblem(runtime::DeviceExecutor& executor, const ProblemInputs& p,
                                       const EncodedInputs& inputs) {
  const v1::DType in = p.key.input_dtype();
  const kernels::OpSpec& spec = kernels::OpSpecOf(p.key.op());
  const size_t output_elements = static_cast<size_t>(p.output_elements);
  runtime::KernelArguments args;
  args.op = &spec;
  args.key = p.key;
  for (const auto& [name, bytes] : inputs.tensors) args.tensors[name] = Upload(executor, bytes);
  args.tensors[std::string(kernels::OutputTensor(spec).name)] =
      executor.Allocate(output_elements * ElementBytes(p.key.output_dtype()));
  // One f32 value per output row (attention's lse), where the key asks.
  if (spec.row_values && spec.row_values->written(p.key)) {
    args.tensors[std::string(spec.row_values->field)] =
        executor.Allocate(static_cast<size_t>(p.batch * p.rows) * sizeof(float));
  }
  if (p.key.write_prologue_output()) {
    args.tensors[std::string(kernels::kPrologueOutputField)] =
        executor.Allocate(output_elements * ElementBytes(in));
  }
  for (const auto& bytes : inputs.chain_tensors)
    args.chain_tensors.push_back(Upload(executor, bytes));
  args.chain_scalars = p.chain_scalars;
  args.ints = p.ints;
  args.floats = p.floats;
  return args;
}

}  // namespace tiletune::tuner
