#include "bench/gpu/gemm/sampled_check.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "tuner/worker/host_reference.h"

namespace tiletune::bench {
namespace {

// `count` distinct indices below `extent` in increasing order; all of them
// when there are no more than `count`.
std::vector<int64_t> SampleIndices(int64_t extent, int64_t count, std::mt19937_64& random) {
  std::vector<int64_t> all(static_cast<size_t>(extent));
  std::iota(all.begin(), all.end(), 0);
  if (extent <= count) return all;
  std::vector<int64_t> picked;
  std::sample(all.begin(), all.end(), std::back_inserter(picked), count, random);
  return picked;
}

}  // namespace

tuner::OutputCheck CheckSampled(const tuner::ProblemInputs& problem, std::span<const float> out,
                                double tolerance, int64_t max_side, uint64_t seed) {
  if (problem.batch != 1)
    throw std::invalid_argument("CheckSampled: batched GEMMs are not sampled");
  const int64_t non_finite =
      std::count_if(out.begin(), out.end(), [](float v) { return !std::isfinite(v); });
  if (non_finite > 0) {
    tuner::OutputCheck check;
    check.non_finite = non_finite;
    check.error = std::to_string(non_finite) + " of " + std::to_string(out.size()) +
                  " output elements are NaN, infinite or never written";
    return check;
  }
  std::mt19937_64 random(seed);
  const std::vector<int64_t> rows = SampleIndices(problem.m, max_side, random);
  const std::vector<int64_t> cols = SampleIndices(problem.n, max_side, random);
  const auto r = static_cast<int64_t>(rows.size()), c = static_cast<int64_t>(cols.size());
  const int64_t k = problem.k;

  // The sample as its own problem: A r x k row-major, B k x c column-major.
  tuner::ProblemInputs sample = problem;
  sample.m = r;
  sample.n = c;
  sample.a_col_major = false;
  sample.b_col_major = true;
  sample.lda = k;
  sample.ldb = k;
  sample.ldc = c;
  sample.output_elements = r * c;
  sample.a.assign(static_cast<size_t>(r * k), 0.0f);
  sample.b.assign(static_cast<size_t>(c * k), 0.0f);
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t q = 0; q < k; ++q) {
      const int64_t row = rows[i];
      sample.a[i * k + q] =
          problem.a_col_major ? problem.a[q * problem.lda + row] : problem.a[row * problem.lda + q];
    }
  }
  for (int64_t j = 0; j < c; ++j) {
    for (int64_t q = 0; q < k; ++q) {
      const int64_t col = cols[j];
      sample.b[j * k + q] =
          problem.b_col_major ? problem.b[col * problem.ldb + q] : problem.b[q * problem.ldb + col];
    }
  }
  // Chain tensors: a bias holds one value per column, a residual one per element.
  for (int i = 0; i < problem.key.chain_size(); ++i) {
    std::vector<float>& tensor = sample.chain_tensors[static_cast<size_t>(i)];
    if (tensor.empty()) continue;
    const std::vector<float> full = std::move(tensor);
    tensor.clear();
    if (problem.key.chain(i).op() == "bias") {
      for (const int64_t col : cols) tensor.push_back(full[col]);
    } else {
      for (const int64_t row : rows) {
        for (const int64_t col : cols) tensor.push_back(full[row * problem.ldc + col]);
      }
    }
  }

  const std::vector<double> reference = tuner::HostReference(sample);
  std::vector<float> picked;
  picked.reserve(reference.size());
  for (const int64_t row : rows) {
    for (const int64_t col : cols) picked.push_back(out[row * problem.ldc + col]);
  }
  return tuner::CheckOutput(picked, reference, tolerance);
}

}  // namespace tiletune::bench
