#include "tuner/decision_margin.h"

#include <algorithm>

#include "tuner/worker/timing_summary.h"

namespace tiletune::tuner {

DecisionMargin JudgeMargin(std::vector<double> ratios, double min_speedup, double noise_factor) {
  std::sort(ratios.begin(), ratios.end());
  DecisionMargin m;
  m.measured = 1 - Quantile(ratios, 0.5);
  m.noise = Quantile(ratios, 0.75) - Quantile(ratios, 0.25);
  m.required = std::max(1 - 1 / min_speedup, noise_factor * m.noise);
  m.tuned = m.measured > m.required;
  return m;
}

}  // namespace tiletune::tuner
