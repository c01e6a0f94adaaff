#include "timing_summary.h"

#include <algorithm>
#include <cmath>

namespace tiletune::tuner {
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

v1::Timing SummarizeTimes(std::vector<double> seconds) {
  v1::Timing t;
  if (seconds.empty()) return t;
  std::sort(seconds.begin(), seconds.end());
  const double median = Quantile(seconds, 0.5);
  t.set_median_us(median * 1e6);
  t.set_min_us(seconds.front() * 1e6);
  t.set_max_us(seconds.back() * 1e6);
  t.set_spread(median > 0 ? (Quantile(seconds, 0.9) - Quantile(seconds, 0.1)) / median : 0);
  t.set_repetitions(static_cast<int32_t>(seconds.size()));
  return t;
}

}  // namespace tiletune::tuner
