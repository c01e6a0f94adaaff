#pragma once

#include <cstddef>
#include <vector>

namespace tiletune::bench {

struct LatencySummary {
  size_t count = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};

// Nearest-rank percentiles of `latencies_ms` (reordered in place); all zero
// when it is empty.
LatencySummary SummarizeLatencies(std::vector<double>& latencies_ms);

}  // namespace tiletune::bench
