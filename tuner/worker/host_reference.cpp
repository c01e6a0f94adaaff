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

#include "kernels/core/op_registry.h"

namespace tiletune::tuner {
namespace {

// Rows of one block share each pass over a GEMM's B and are handed to a
// thread as one piece of work.
constexpr size_t kRowBlock = 8;

enum class ChainKind { kBias, kScale, kRelu, kGeluTanh, kGeluErf, kSilu, kResidualAdd, kCast };

const kernels::OpSpec& ReferenceOpOf(const std::string& op) {
  const kernels::OpSpec* spec = kernels::FindOpSpec(op);
  if (!spec) throw std::invalid_argument("reference: unknown op '" + op + "'");
  return *spec;
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

// Applies `ops` in order to `y`, output row `row` (rows `cols` elements
// apart).
void ApplyOps(const std::vector<ElementOp>& ops, int64_t row, int64_t cols, std::span<double> y) {
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
        case ChainKind::kResidualAdd: v += t[static_cast<size_t>(row * cols) + c]; break;
        case ChainKind::kCast: break;  // f32 to f32
      }
    }
  }
}

// Which output of the problem a RowComputer computes: the op's, the row
// op's input after the prologue, or the op's row values (attention's lse).
enum class Output { kResult, kPrologueResult, kRowValues };

// Computes blocks of output rows: the op, then its chain; a row op's input
// row gets the prologue first. For kPrologueResult, the row op's input after
// the prologue (what a key with write_prologue_output also writes).
class RowComputer {
 public:
  RowComputer(const ProblemInputs& p, Output output)
      : p_(p),
        output_(output),
        // The prologue's result is what the element-wise op computes from
        // the prologue alone.
        op_(output == Output::kPrologueResult
                ? kernels::KernelOpFor(kernels::FusionKind::kElementwise)
                : ReferenceOpOf(p.key.op())),
        args_(p.Reference()),
        // A row op's prologue applies to its first tensor, x.
        x_(op_.row_reference ? p.tensors.at(std::string(op_.tensors.front().name)).data()
                             : nullptr),
        prologue_(Resolve(p, p.key.prologue(), 0)),
        chain_(output == Output::kPrologueResult
                   ? std::vector<ElementOp>{}
                   : Resolve(p, p.key.chain(), p.key.prologue_size())) {}

  // `rows` of one batch entry into `out` (rows.size() x n; one value a row
  // for kRowValues).
  void Compute(std::span<const int64_t> rows, double* out) const {
    const auto n = static_cast<size_t>(p_.cols);
    if (output_ == Output::kRowValues) {
      std::vector<double> result(rows.size() * n);
      op_.attention_reference(args_, rows, result.data(), out);
      return;
    }
    if (op_.matmul_reference) op_.matmul_reference(args_, rows, out);
    if (op_.attention_reference) op_.attention_reference(args_, rows, out, nullptr);
    std::vector<double> x(op_.row_reference ? n : 0);
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      const std::span<double> y(out + ri * n, n);
      if (op_.row_reference) {
        const float* in = x_ + rows[ri] * p_.cols;
        std::copy(in, in + n, x.begin());
        ApplyOps(prologue_, rows[ri], p_.cols, x);
        op_.row_reference(args_, x, y);
      }
      ApplyOps(chain_, rows[ri], p_.cols, y);
    }
  }

 private:
  const ProblemInputs& p_;
  const Output output_;
  const kernels::OpSpec& op_;
  kernels::ReferenceArgs args_;
  const float* x_;
  std::vector<ElementOp> prologue_, chain_;
};

// The rows in blocks of at most kRowBlock rows of one batch entry (of
// `per_entry` rows), as [begin, end) positions in `rows`.
std::vector<std::pair<size_t, size_t>> RowBlocks(const std::vector<int64_t>& rows,
                                                 int64_t per_entry) {
  std::vector<std::pair<size_t, size_t>> blocks;
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin + 1;
    while (end < rows.size() && end - begin < kRowBlock &&
           rows[end] / per_entry == rows[begin] / per_entry)
      ++end;
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
  ref.row_elements = output == Output::kRowValues ? 1 : problem.cols;
  ref.output_rows = OutputRows(problem);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= ref.output_rows || (i > 0 && rows[i] <= rows[i - 1])) {
      throw std::invalid_argument("reference: rows must be ascending, distinct and below " +
                                  std::to_string(ref.output_rows) + "; row " + std::to_string(i) +
                                  " is " + std::to_string(rows[i]));
    }
  }
  ref.rows = std::move(rows);
  ref.values.resize(ref.rows.size() * static_cast<size_t>(ref.row_elements));

  const auto blocks = RowBlocks(ref.rows, problem.rows);
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto work = [&] {
    try {
      for (size_t b; (b = next++) < blocks.size() && !failed;) {
        const auto [begin, end] = blocks[b];
        computer.Compute(std::span(ref.rows).subspan(begin, end - begin),
                         ref.values.data() + begin * static_cast<size_t>(ref.row_elements));
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
  return problem.batch * problem.rows;
}

Reference HostReference(const ProblemInputs& problem, std::vector<int64_t> rows, int threads) {
  return ComputeRows(problem, Output::kResult, std::move(rows), threads);
}

Reference HostPrologueReference(const ProblemInputs& problem, std::vector<int64_t> rows,
                                int threads) {
  return ComputeRows(problem, Output::kPrologueResult, std::move(rows), threads);
}

std::optional<Reference> HostRowValuesReference(const ProblemInputs& problem,
                                                std::vector<int64_t> rows, int threads) {
  const kernels::OpSpec& spec = ReferenceOpOf(problem.key.op());
  if (!spec.row_values || !spec.row_values->written(problem.key)) return std::nullopt;
  Reference ref = ComputeRows(problem, Output::kRowValues, std::move(rows), threads);
  // Stored by the output's own order, not the op's rows; -inf is a value.
  for (int64_t& row : ref.rows) row = spec.row_values->element(problem.Reference(), row);
  ref.negative_infinity_allowed = true;
  return ref;
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
