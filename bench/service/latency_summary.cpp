#include "bench/service/latency_summary.h"

#include <algorithm>
#include <cmath>

namespace tiletune::bench {
namespace {

// The smallest value with at least `fraction` of the values at or below it.
double Percentile(const std::vector<double>& sorted, double fraction) {
  auto rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

LatencySummary SummarizeLatencies(std::vector<double>& latencies_ms) {
  LatencySummary summary;
  summary.count = latencies_ms.size();
  if (latencies_ms.empty()) return summary;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  summary.p50_ms = Percentile(latencies_ms, 0.50);
  summary.p90_ms = Percentile(latencies_ms, 0.90);
  summary.p99_ms = Percentile(latencies_ms, 0.99);
  summary.max_ms = latencies_ms.back();
  return summary;
}

}  // namespace tiletune::bench
