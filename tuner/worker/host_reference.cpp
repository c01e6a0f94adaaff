#include "host_reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

namespace tiletune::tuner {
namespace {

// Rows of one block share each pass over B (and are handed to a thread as
// one piece of work); columns of one pass over row-major B keep their
// accumulators in L1.
constexpr size_t kRowBlock = 8;
constexpr int64_t kColumnBlock = 512;

enum class OpKind { kGemm, kSoftmax, kRmsnorm, kLayernorm, kElementwise };
enum class ChainKind { kBias, kScale, kRelu, kGeluTanh, kGeluErf, kSilu, kResidualAdd, kCast };

OpKind OpKindOf(const std::string& op) {
  if (op == "gemm") return OpKind::kGemm;
  if (op == "softmax") return OpKind::kSoftmax;
  if (op == "rmsnorm") return OpKind::kRmsnorm;
  if (op == "layernorm") return OpKind::kLayernorm;
  if (op == "elementwise") return OpKind::kElementwise;
  throw std::invalid_argument("reference: unknown op '" + op + "'");
}

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

// One prologue or chain op with its tensor and scalar.
struct ElementOp {
  ChainKind kind;
  const std::vector<float>* tensor;
  double scalar;
};

// `ops`, whose tensors and scalars start at `first` in the problem's chain
// arguments. Resolved before any thread starts, so unknown ops throw here.
std::vector<ElementOp> Resolve(const ProblemInputs& p,
                               const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops,
                               int first) {
  std::vector<ElementOp> resolved;
  for (int i = 0; i < ops.size(); ++i) {
    const auto at = static_cast<size_t>(first + i);
    resolved.push_back({KindOf(ops[i].op()), &p.chain_tensors[at], p.chain_scalars[at]});
  }
  return resolved;
}

// Applies `ops` in order to `y`, output row `row` (ldc elements apart).
void ApplyOps(const std::vector<ElementOp>& ops, int64_t row, int64_t ldc, std::span<double> y) {
  for (const ElementOp& op : ops) {
    const std::vector<float>& t = *op.tensor;
    for (size_t c = 0; c < y.size(); ++c) {
      double& v = y[c];
      switch (op.kind) {
        case ChainKind::kBias: v += t[c]; break;
        case ChainKind::kScale: v *= op.scalar; break;
        case ChainKind::kRelu: v = std::max(v, 0.0); break;
        case ChainKind::kGeluTanh:
          v = 0.5 * v *
              (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
          break;
        case ChainKind::kGeluErf: v = 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); break;
        case ChainKind::kSilu: v = v / (1.0 + std::exp(-v)); break;
        case ChainKind::kResidualAdd: v += t[static_cast<size_t>(row * ldc) + c]; break;
        case ChainKind::kCast: break;  // f32 to f32
      }
    }
  }
}

// Rows of C of one batch entry into `out` (rows.size() x n). A's rows are
// widened once; B is read along its contiguous dimension.
void GemmRows(const ProblemInputs& p, std::span<const int64_t> rows, double* out) {
  const int64_t entry = rows.front() / p.m;
  const float* a = p.a.data() + entry * p.m * p.k;
  const float* b = p.b.data() + entry * p.k * p.n;
  const auto r = static_cast<int64_t>(rows.size());
  std::vector<double> a_rows(static_cast<size_t>(r * p.k));
  for (int64_t ri = 0; ri < r; ++ri) {
    const int64_t i = rows[static_cast<size_t>(ri)] - entry * p.m;
    for (int64_t q = 0; q < p.k; ++q) {
      a_rows[ri * p.k + q] = p.a_col_major ? a[q * p.lda + i] : a[i * p.lda + q];
    }
  }
  if (p.b_col_major) {
    for (int64_t j = 0; j < p.n; ++j) {
      const float* bj = b + j * p.ldb;
      for (int64_t ri = 0; ri < r; ++ri) {
        const double* ai = a_rows.data() + ri * p.k;
        // Four partial sums: independent chains the CPU can overlap.
        double s[4] = {0, 0, 0, 0};
        int64_t q = 0;
        for (; q + 4 <= p.k; q += 4) {
          for (int u = 0; u < 4; ++u) s[u] += ai[q + u] * bj[q + u];
        }
        for (; q < p.k; ++q) s[0] += ai[q] * bj[q];
        out[ri * p.n + j] = (s[0] + s[1]) + (s[2] + s[3]);
      }
    }
    return;
  }
  std::fill(out, out + r * p.n, 0.0);
  for (int64_t j0 = 0; j0 < p.n; j0 += kColumnBlock) {
    const int64_t width = std::min(kColumnBlock, p.n - j0);
    for (int64_t q = 0; q < p.k; ++q) {
      const float* bq = b + q * p.ldb + j0;
      for (int64_t ri = 0; ri < r; ++ri) {
        const double aiq = a_rows[ri * p.k + q];
        double* ci = out + ri * p.n + j0;
        for (int64_t j = 0; j < width; ++j) ci[j] += aiq * bq[j];
      }
    }
  }
}

void Softmax(std::span<const double> x, std::span<double> y) {
  const double max = *std::max_element(x.begin(), x.end());
  double sum = 0;
  for (size_t c = 0; c < x.size(); ++c) sum += y[c] = std::exp(x[c] - max);
  for (double& v : y) v /= sum;
}

void Rmsnorm(const ProblemInputs& p, std::span<const double> x, std::span<double> y) {
  double squares = 0;
  for (double v : x) squares += v * v;
  const double rms = std::sqrt(squares / static_cast<double>(x.size()) + p.eps);
  for (size_t c = 0; c < x.size(); ++c) y[c] = x[c] / rms * p.weight[c];
}

void Layernorm(const ProblemInputs& p, std::span<const double> x, std::span<double> y) {
  double sum = 0;
  for (double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  double squares = 0;
  for (double v : x) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(x.size()) + p.eps);
  for (size_t c = 0; c < x.size(); ++c) y[c] = (x[c] - mean) / stddev * p.weight[c] + p.shift[c];
}

// Which output of the problem a RowComputer computes.
enum class Output { kResult, kPrologueResult };

// Computes blocks of output rows: the op, then its chain; a row op's input
// row gets the prologue first. For kPrologueResult, the row op's input after
// the prologue (what a key with write_prologue_output also writes).
class RowComputer {
 public:
  RowComputer(const ProblemInputs& p, Output output)
      : p_(p),
        op_(output == Output::kPrologueResult ? OpKind::kElementwise : OpKindOf(p.key.op())),
        prologue_(Resolve(p, p.key.prologue(), 0)),
        chain_(output == Output::kPrologueResult
                   ? std::vector<ElementOp>{}
                   : Resolve(p, p.key.chain(), p.key.prologue_size())) {}

  // `rows` of one batch entry into `out` (rows.size() x n).
  void Compute(std::span<const int64_t> rows, double* out) const {
    const auto n = static_cast<size_t>(p_.n);
    if (op_ == OpKind::kGemm) GemmRows(p_, rows, out);
    std::vector<double> x(op_ == OpKind::kGemm ? 0 : n);
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      const std::span<double> y(out + ri * n, n);
      if (op_ != OpKind::kGemm) {
        const float* in = p_.a.data() + rows[ri] * p_.lda;
        std::copy(in, in + n, x.begin());
        ApplyOps(prologue_, rows[ri], p_.ldc, x);
        switch (op_) {
          case OpKind::kSoftmax: Softmax(x, y); break;
          case OpKind::kRmsnorm: Rmsnorm(p_, x, y); break;
          case OpKind::kLayernorm: Layernorm(p_, x, y); break;
          default: std::copy(x.begin(), x.end(), y.begin()); break;
        }
      }
      ApplyOps(chain_, rows[ri], p_.ldc, y);
    }
  }

 private:
  const ProblemInputs& p_;
  OpKind op_;
  std::vector<ElementOp> prologue_, chain_;
};

// The rows in blocks of at most kRowBlock rows of one batch entry, as
// [begin, end) positions in `rows`.
std::vector<std::pair<size_t, size_t>> RowBlocks(const std::vector<int64_t>& rows, int64_t m) {
  std::vector<std::pair<size_t, size_t>> blocks;
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin + 1;
    while (end < rows.size() && end - begin < kRowBlock && rows[end] / m == rows[begin] / m) ++end;
    blocks.emplace_back(begin, end);
    begin = end;
  }
  return blocks;
}

// `rows` of `output`, in blocks spread over `threads` threads.
Reference ComputeRows(const ProblemInputs& problem, Output output, std::vector<int64_t> rows,
                      int threads) {
  const RowComputer computer(problem, output);
  Reference ref;
  ref.row_elements = problem.n;
  ref.output_rows = OutputRows(problem);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= ref.output_rows || (i > 0 && rows[i] <= rows[i - 1])) {
      throw std::invalid_argument("reference: rows must be ascending, distinct and below " +
                                  std::to_string(ref.output_rows) + "; row " + std::to_string(i) +
                                  " is " + std::to_string(rows[i]));
    }
  }
  ref.rows = std::move(rows);
  ref.values.resize(ref.rows.size() * static_cast<size_t>(problem.n));

  const auto blocks = RowBlocks(ref.rows, problem.m);
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto work = [&] {
    try {
      for (size_t b; (b = next++) < blocks.size() && !failed;) {
        const auto [begin, end] = blocks[b];
        computer.Compute(std::span(ref.rows).subspan(begin, end - begin),
                         ref.values.data() + begin * static_cast<size_t>(problem.n));
      }
    } catch (...) {
      if (!failed.exchange(true)) failure = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    const size_t workers = std::min(blocks.size(), static_cast<size_t>(std::max(1, threads)));
    for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
  return ref;
}

}  // namespace

int64_t OutputRows(const ProblemInputs& problem) {
  return problem.batch * problem.m;
}

Reference HostReference(const ProblemInputs& problem, std::vector<int64_t> rows, int threads) {
  return ComputeRows(problem, Output::kResult, std::move(rows), threads);
}

Reference HostPrologueReference(const ProblemInputs& problem, std::vector<int64_t> rows,
                                int threads) {
  return ComputeRows(problem, Output::kPrologueResult, std::move(rows), threads);
}

std::vector<int64_t> AllOutputRows(const ProblemInputs& problem) {
  std::vector<int64_t> rows(static_cast<size_t>(OutputRows(problem)));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
  return rows;
}

Reference HostReference(const ProblemInputs& problem, int threads) {
  return HostReference(problem, AllOutputRows(problem), threads);
}

}  // namespace tiletune::tuner
