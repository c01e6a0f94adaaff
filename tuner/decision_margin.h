#pragma once

#include <vector>

namespace tiletune::tuner {

// Whether a tuned kernel beats the baseline, judged from per-round time
// ratios (variant / baseline, each pair measured back to back).
struct DecisionMargin {
  double measured = 0;  // 1 - median ratio: the fraction of time saved
  // The interquartile range of the ratios. The middle half, not p90 - p10:
  // with a handful of rounds those are the extremes, and one round disturbed
  // by a neighbour would veto a clear win.
  double noise = 0;
  double required = 0;  // max(1 - 1 / min_speedup, noise_factor * noise)
  bool tuned = false;   // measured > required
};

// ratios must not be empty.
DecisionMargin JudgeMargin(std::vector<double> ratios, double min_speedup, double noise_factor);

}  // namespace tiletune::tuner
