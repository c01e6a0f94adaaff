#include "host_reference.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace tiletune::tuner {
namespace {

enum class ChainKind { kBias, kScale, kRelu, kGeluTanh, kGeluErf, kSilu, kResidualAdd, kCast };

ChainKind KindOf(const std::string& op) {
  if (op == "bias") return ChainKind::kBias;
  if (op == "scale") return ChainKind::kScale;
  if (op == "relu") return ChainKind::kRelu;
  if (op == "gelu_tanh") return ChainKind::kGeluTanh;
  if (op == "gelu_erf") return ChainKind::kGeluErf;
  if (op == "silu") return ChainKind::kSilu;
  if (op == "residual_add") return ChainKind::kResidualAdd;
  if (op == "cast") return ChainKind::kCast;
  throw std::invalid_argument("reference: unknown chain op '" + op + "'");
}

// Applies `ops` in order to every element of `out` (shaped like the output);
// their tensors and scalars start at `first` in the problem's chain arguments.
void ApplyOps(const ProblemInputs& p, const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops,
              int first, std::vector<double>& out) {
  for (int i = 0; i < ops.size(); ++i) {
    const ChainKind kind = KindOf(ops[i].op());
    const std::vector<float>& t = p.chain_tensors[static_cast<size_t>(first + i)];
    const double s = p.chain_scalars[static_cast<size_t>(first + i)];
    for (size_t idx = 0; idx < out.size(); ++idx) {
      double& v = out[idx];
      switch (kind) {
        case ChainKind::kBias: v += t[idx % static_cast<size_t>(p.n)]; break;
        case ChainKind::kScale: v *= s; break;
        case ChainKind::kRelu: v = std::max(v, 0.0); break;
        case ChainKind::kGeluTanh:
          v = 0.5 * v *
              (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
          break;
        case ChainKind::kGeluErf: v = 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); break;
        case ChainKind::kSilu: v = v / (1.0 + std::exp(-v)); break;
        case ChainKind::kResidualAdd: v += t[idx]; break;
        case ChainKind::kCast: break;  // f32 to f32
      }
    }
  }
}

std::vector<double> Gemm(const ProblemInputs& p) {
  std::vector<double> out(static_cast<size_t>(p.output_elements), 0.0);
  std::vector<double> b_row(static_cast<size_t>(p.n));
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    const float* a = p.a.data() + batch * p.m * p.k;
    const float* b = p.b.data() + batch * p.k * p.n;
    double* c = out.data() + batch * p.m * p.n;
    for (int64_t q = 0; q < p.k; ++q) {
      for (int64_t j = 0; j < p.n; ++j)
        b_row[j] = p.b_col_major ? b[j * p.ldb + q] : b[q * p.ldb + j];
      for (int64_t i = 0; i < p.m; ++i) {
        const double aiq = p.a_col_major ? a[q * p.lda + i] : a[i * p.lda + q];
        double* ci = c + i * p.ldc;
        for (int64_t j = 0; j < p.n; ++j) ci[j] += aiq * b_row[j];
      }
    }
  }
  return out;
}

// The input x of a row op with the key's prologue applied.
std::vector<double> RowInput(const ProblemInputs& p) {
  std::vector<double> x(p.a.begin(), p.a.end());
  ApplyOps(p, p.key.prologue(), 0, x);
  return x;
}

// Runs fn(row input, row output) over every row of a row op.
template <class F>
std::vector<double> EachRow(const ProblemInputs& p, const F& fn) {
  const std::vector<double> x = RowInput(p);
  std::vector<double> out(static_cast<size_t>(p.output_elements));
  for (int64_t r = 0; r < p.m; ++r) fn(x.data() + r * p.lda, out.data() + r * p.ldc);
  return out;
}

std::vector<double> Softmax(const ProblemInputs& p) {
  return EachRow(p, [&](const double* x, double* y) {
    const double max = *std::max_element(x, x + p.n);
    double sum = 0;
    for (int64_t c = 0; c < p.n; ++c) sum += y[c] = std::exp(x[c] - max);
    for (int64_t c = 0; c < p.n; ++c) y[c] /= sum;
  });
}

std::vector<double> Rmsnorm(const ProblemInputs& p) {
  return EachRow(p, [&](const double* x, double* y) {
    double squares = 0;
    for (int64_t c = 0; c < p.n; ++c) squares += x[c] * x[c];
    const double rms = std::sqrt(squares / static_cast<double>(p.n) + p.eps);
    for (int64_t c = 0; c < p.n; ++c) y[c] = x[c] / rms * p.weight[c];
  });
}

std::vector<double> Layernorm(const ProblemInputs& p) {
  return EachRow(p, [&](const double* x, double* y) {
    double sum = 0;
    for (int64_t c = 0; c < p.n; ++c) sum += x[c];
    const double mean = sum / static_cast<double>(p.n);
    double squares = 0;
    for (int64_t c = 0; c < p.n; ++c) squares += (x[c] - mean) * (x[c] - mean);
    const double stddev = std::sqrt(squares / static_cast<double>(p.n) + p.eps);
    for (int64_t c = 0; c < p.n; ++c) y[c] = (x[c] - mean) / stddev * p.weight[c] + p.shift[c];
  });
}

}  // namespace

std::vector<double> HostPrologueReference(const ProblemInputs& problem) {
  return RowInput(problem);
}

std::vector<double> HostReference(const ProblemInputs& problem) {
  const std::string& op = problem.key.op();
  std::vector<double> out;
  if (op == "gemm") {
    out = Gemm(problem);
  } else if (op == "softmax") {
    out = Softmax(problem);
  } else if (op == "rmsnorm") {
    out = Rmsnorm(problem);
  } else if (op == "layernorm") {
    out = Layernorm(problem);
  } else if (op == "elementwise") {
    out = RowInput(problem);
  } else {
    throw std::invalid_argument("reference: unknown op '" + op + "'");
  }
  ApplyOps(problem, problem.key.chain(), problem.key.prologue_size(), out);
  return out;
}

}  // namespace tiletune::tuner
