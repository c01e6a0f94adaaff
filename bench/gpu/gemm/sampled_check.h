#pragma once

#include <cstdint>
#include <span>

#include "tuner/worker/output_validation.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::bench {

// Checks a GEMM's output (decoded, row-major m x n) against the float64
// reference on a sample: up to `max_side` rows x `max_side` columns drawn
// from `seed` (kSampleSide: 4096 elements; INT64_MAX: all of them). The
// sample is a smaller GEMM of the same key (those rows of A, those columns
// of B and of each chain tensor), so tuner::HostReference computes it: a
// 4096^3 reference would cost ~20 s on one core, the sample 4096 * k
// multiply-adds. Every element
// of `out` is still checked to be finite and written (poison is a NaN).
// Throws std::invalid_argument for a batched problem.
inline constexpr int64_t kSampleSide = 64;
tuner::OutputCheck CheckSampled(const tuner::ProblemInputs& problem, std::span<const float> out,
                                double tolerance, int64_t max_side, uint64_t seed);

}  // namespace tiletune::bench
