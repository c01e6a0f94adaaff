#include "reference_rows.h"

#include <algorithm>
#include <random>
#include <set>
#include <thread>

#include "kernels/core/op_registry.h"
#include "tuner/worker/host_reference.h"

namespace tiletune::tuner {
namespace {

// Tile heights whose last tile gets its first row checked: every block or
// task height our templates use is a multiple of 16 up to 256 (or divides
// 16, leaving no partial tile the last row does not cover).
constexpr int64_t kTileHeightStep = 16;
constexpr int64_t kMaxTileHeight = 256;

}  // namespace

double ReferenceFlops(const ProblemInputs& problem) {
  const auto elements = static_cast<double>(problem.output_elements);
  const double element_ops = problem.key.prologue_size() + problem.key.chain_size();
  const auto own = static_cast<double>(kernels::OpSpecOf(problem.key.op()).flops(problem.key));
  return own + elements * element_ops;
}

std::vector<int64_t> SampledRows(const ProblemInputs& problem, int random_rows, uint64_t seed) {
  const int64_t total = OutputRows(problem);
  std::set<int64_t> rows;
  for (const int64_t entry : {int64_t{0}, problem.batch - 1}) {
    const int64_t first = entry * problem.rows, last = first + problem.rows - 1;
    rows.insert(first);
    rows.insert(last);
    for (int64_t height = kTileHeightStep; height <= kMaxTileHeight; height += kTileHeightStep) {
      rows.insert(first + (problem.rows - 1) / height * height);
    }
  }
  if (static_cast<int64_t>(rows.size()) + random_rows >= total) return AllOutputRows(problem);
  // std::mt19937_64's sequence is fixed by the standard (distributions are
  // not): the same seed samples the same rows everywhere.
  std::mt19937_64 engine(seed);
  for (int drawn = 0; drawn < random_rows;) {
    drawn += rows.insert(static_cast<int64_t>(engine() % static_cast<uint64_t>(total))).second;
  }
  return {rows.begin(), rows.end()};
}

std::vector<int64_t> ReferenceRows(const ProblemInputs& problem,
                                   const worker::v1::ReferencePolicy& policy, uint64_t seed) {
  if (policy.max_full_flops() <= 0 || ReferenceFlops(problem) <= policy.max_full_flops()) {
    return AllOutputRows(problem);
  }
  return SampledRows(problem, policy.sample_rows(), seed);
}

int ReferenceThreads(const worker::v1::ReferencePolicy& policy) {
  if (policy.threads() > 0) return policy.threads();
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace tiletune::tuner
