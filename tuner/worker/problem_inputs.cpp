#include "tuner/worker/problem_inputs.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <thread>

#include "kernels/core/chain_ops.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"
#include "tuner/worker/element_codec.h"

namespace tiletune::tuner {
namespace {

// Values per thread below which a tensor is drawn on one thread.
constexpr int64_t kMinElementsPerThread = int64_t{1} << 18;

// splitmix64's finaliser: a bijection of 64-bit words whose outputs for
// consecutive counters pass as random.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// Counter-based: a tensor's i-th value is a function of the seed, the
// tensor's place in the draw and i alone, so any number of threads draws
// the same inputs, on every platform.
class InputDraw {
 public:
  InputDraw(uint64_t seed, int threads) : seed_(seed), threads_(std::max(1, threads)) {}

  // Uniform in [-1, 1], redrawn while |x| < 2^-10, rounded to `dtype`.
  std::vector<float> Tensor(int64_t elements, v1::DType dtype) {
    const uint64_t stream = NextStream();
    std::vector<float> t(static_cast<size_t>(elements));
    const int64_t threads = std::clamp<int64_t>(elements / kMinElementsPerThread, 1, threads_);
    const int64_t per = (elements + threads - 1) / threads;
    auto fill = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        t[static_cast<size_t>(i)] = RoundToDType(Value(stream, static_cast<uint64_t>(i)), dtype);
      }
    };
    std::vector<std::jthread> pool;
    for (int64_t w = 1; w < threads; ++w) {
      pool.emplace_back(fill, w * per, std::min(elements, (w + 1) * per));
    }
    fill(0, std::min(elements, per));
    return t;
  }

  float Scalar() { return Value(NextStream(), 0); }

 private:
  uint64_t NextStream() { return Mix(seed_ + kGolden * ++draws_); }

  static float Value(uint64_t stream, uint64_t i) {
    for (uint64_t h = Mix(stream ^ Mix(i));; h = Mix(h + kGolden)) {
      const float u = static_cast<float>(h >> 40) * 0x1p-24f;  // [0, 1)
      const float x = 2.0f * u - 1.0f;
      if (x >= 0x1p-10f || x <= -0x1p-10f) return x;
    }
  }

  const uint64_t seed_;
  const int threads_;
  uint64_t draws_ = 0;
};

}  // namespace

ProblemInputs MakeProblemInputs(const v1::KernelKey& raw_key, uint64_t seed, int threads) {
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
  InputDraw draw(seed, threads);
  const kernels::OpSpec& spec = kernels::OpSpecOf(key.op());
  const auto size = [&](std::string_view dim) { return kernels::DimOrDefault(key, spec, dim); };
  for (const kernels::TensorArg& t : spec.tensors) {
    if (t.role == kernels::TensorRole::kOutput) continue;
    int64_t elements = 1;
    for (std::string_view dim : t.dims) elements *= size(dim);
    p.tensors.emplace(std::string(t.name), draw.Tensor(elements, in));
  }
  if (spec.optional_inputs) {
    for (const kernels::OptionalInput& t : spec.optional_inputs(key)) {
      std::vector<float> tensor = draw.Tensor(t.elements, in);
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
      case kernels::ChainTensor::kPerColumn: tensor = draw.Tensor(p.cols, op.dtype()); break;
      case kernels::ChainTensor::kLikeOutput:
        tensor = draw.Tensor(p.output_elements, op.dtype());
        break;
      case kernels::ChainTensor::kNone: break;
    }
    if (kernels::ReadsScalar(op))
      scalar = op.scalar() != 0 ? op.scalar() : 1.0 + 0.5 * draw.Scalar();
    p.chain_tensors.push_back(std::move(tensor));
    p.chain_scalars.push_back(scalar);
  }
  return p;
}

}  // namespace tiletune::tuner
