#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/worker/problem_inputs.h"

namespace tiletune::tuner {

// The op with its prologue and epilogue chain computed in float64 on the CPU
// from the same f32 inputs the kernel reads: what every backend's output is
// checked against. Output rows are computed whole (a GEMM row costs k * n
// multiply-adds, a row op's row its n elements), so a large problem can be
// checked on a sample of rows at a fraction of the full cost.
struct Reference {
  int64_t row_elements = 0;    // output elements per row: n
  int64_t output_rows = 0;     // rows of the whole output (OutputRows)
  std::vector<int64_t> rows;   // the rows computed: ascending, distinct
  std::vector<double> values;  // their values, row after row
  // -inf is a value the output may hold (attention's lse of a row that
  // sees no key), not a fault; rows then need not ascend.
  bool negative_infinity_allowed = false;

  int64_t checked_elements() const { return static_cast<int64_t>(rows.size()) * row_elements; }
  bool sampled() const { return static_cast<int64_t>(rows.size()) < output_rows; }
};

// Rows of the output in its row-major order: batch * m for a GEMM (batch
// entries one after another), rows for row and element-wise ops.
int64_t OutputRows(const ProblemInputs& problem);
// 0, 1, ..., OutputRows - 1.
std::vector<int64_t> AllOutputRows(const ProblemInputs& problem);

// The reference on `rows` (ascending, distinct, below OutputRows), computed
// on up to `threads` threads. Throws std::invalid_argument for an op or
// chain op it does not know, or a row out of range.
Reference HostReference(const ProblemInputs& problem, std::vector<int64_t> rows, int threads);

// The reference on every row.
Reference HostReference(const ProblemInputs& problem, int threads = 1);

// The row values of an op whose key asks for them (attention's lse), for
// the output's `rows` (ascending, distinct): one value a row, at the
// element of the row-values output each row writes; nullopt where the key
// asks for none.
std::optional<Reference> HostRowValuesReference(const ProblemInputs& problem,
                                                std::vector<int64_t> rows, int threads);

// The second output of a row op whose key has write_prologue_output: its
// input x after the prologue (the residual stream), on `rows`, laid out like
// the output.
Reference HostPrologueReference(const ProblemInputs& problem, std::vector<int64_t> rows,
                                int threads);

// The second output of a row op whose key has write_prologue_output: its
// input x after the prologue, in float64, laid out like the output.
std::vector<double> HostPrologueReference(const ProblemInputs& problem);

}  // namespace tiletune::tuner
