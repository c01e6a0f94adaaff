#include "tuner/worker/problem_inputs.h"

#include <limits>
#include <random>
#include <stdexcept>

#include "kernels/core/chain_ops.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"
#include "tuner/worker/element_codec.h"

namespace tiletune::tuner {
namespace {

// std::mt19937_64's sequence is fixed by the standard (distributions are
// not), so equal seeds give equal inputs on every platform.
class InputDraw {
 public:
  explicit InputDraw(uint64_t seed) : engine_(seed) {}

  // Uniform in [-1, 1], redrawn while |x| < 2^-10.
  float Next() {
    for (;;) {
      const float u = static_cast<float>(engine_() >> 40) * 0x1p-24f;  // [0, 1)
      const float x = 2.0f * u - 1.0f;
      if (x >= 0x1p-10f || x <= -0x1p-10f) return x;
    }
  }

  std::vector<float> Tensor(int64_t elements) {
    std::vector<float> t(static_cast<size_t>(elements));
    for (auto& v : t) v = Next();
    return t;
  }

 private:
  std::mt19937_64 engine_;
};

// A drawn tensor rounded to the element type the kernel reads it in.
std::vector<float> Rounded(std::vector<float> tensor, v1::DType dtype) {
  for (auto& v : tensor) v = RoundToDType(v, dtype);
  return tensor;
}

}  // namespace

ProblemInputs MakeProblemInputs(const v1::KernelKey& raw_key, uint64_t seed) {
  if (const auto error = kernels::ValidateKernelKey(raw_key, kernels::KeyLimits{})) {
    throw std::invalid_argument("invalid key: " + error->ToString());
  }
  ProblemInputs p;
  p.key = kernels::NormalizeKernelKey(raw_key);
  const v1::KernelKey& key = p.key;
  const v1::DType in = key.input_dtype();
  // Throws for element types the worker cannot lay out.
  ElementBytes(in);
  ElementBytes(key.output_dtype());
  InputDraw draw(seed);
  const kernels::OpSpec& spec = kernels::OpSpecOf(key.op());
  const auto size = [&](std::string_view dim) { return kernels::DimOrDefault(key, spec, dim); };
  for (const kernels::TensorArg& t : spec.tensors) {
    if (t.role == kernels::TensorRole::kOutput) continue;
    int64_t elements = 1;
    for (std::string_view dim : t.dims) elements *= size(dim);
    p.tensors.emplace(std::string(t.name), Rounded(draw.Tensor(elements), in));
  }
  if (spec.optional_inputs) {
    for (const kernels::OptionalInput& t : spec.optional_inputs(key)) {
      std::vector<float> tensor = Rounded(draw.Tensor(t.elements), in);
      for (int64_t i = 0; t.hidden_every > 0 && i < t.elements; i += t.hidden_every) {
        tensor[static_cast<size_t>(i)] = -std::numeric_limits<float>::infinity();
      }
      p.tensors.emplace(t.name, std::move(tensor));
    }
  }
  p.ints = kernels::FixedInts(key, spec);
  p.floats = kernels::DefaultFloats(spec);
  // The output's last dim is its columns, the one before its rows, and the
  // others count batch entries.
  const std::vector<std::string_view>& out = kernels::OutputTensor(spec).dims;
  p.cols = size(out.back());
  p.rows = out.size() > 1 ? size(out[out.size() - 2]) : 1;
  for (size_t i = 0; i + 2 < out.size(); ++i) p.batch *= size(out[i]);
  p.output_elements = p.batch * p.rows * p.cols;

  for (const auto& op : kernels::ChainArgumentOps(key)) {
    std::vector<float> tensor;
    double scalar = 0;
    switch (kernels::ChainTensorOf(op)) {
      case kernels::ChainTensor::kPerColumn:
        tensor = Rounded(draw.Tensor(p.cols), op.dtype());
        break;
      case kernels::ChainTensor::kLikeOutput:
        tensor = Rounded(draw.Tensor(p.output_elements), op.dtype());
        break;
      case kernels::ChainTensor::kNone: break;
    }
    if (kernels::ReadsScalar(op)) scalar = op.scalar() != 0 ? op.scalar() : 1.0 + 0.5 * draw.Next();
    p.chain_tensors.push_back(std::move(tensor));
    p.chain_scalars.push_back(scalar);
  }
  return p;
}

}  // namespace tiletune::tuner
