#pragma once

#include <cstdint>
#include <vector>

#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::tuner {

// Estimated float64 operations of the whole reference: two per multiply-add
// of a GEMM, a few per element of a row op, one per element for each
// prologue and chain op.
double ReferenceFlops(const ProblemInputs& problem);

// The output rows a sampled reference computes (see host_reference.h):
// `random_rows` rows drawn from `seed`, and, in the first and the last
// batch entry, the first and last row and the first row of the last tile for
// every tile height that is a multiple of 16 up to 256, where an odd shape
// leaves a partial tile. Ascending and distinct; every row when that is not
// fewer.
std::vector<int64_t> SampledRows(const ProblemInputs& problem, int random_rows, uint64_t seed);

// The rows the worker compares under `policy`: every row while
// ReferenceFlops stays within policy.max_full_flops (or that is 0), else
// SampledRows.
std::vector<int64_t> ReferenceRows(const ProblemInputs& problem,
                                   const worker::v1::ReferencePolicy& policy, uint64_t seed);

// policy.threads, or every hardware thread for 0.
int ReferenceThreads(const worker::v1::ReferencePolicy& policy);

}  // namespace tiletune::tuner
