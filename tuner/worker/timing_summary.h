#pragma once

#include <vector>

#include "tiletune/v1/records.pb.h"

namespace tiletune::tuner {

// Median, min, max (microseconds), spread = (p90 - p10) / median and the
// count of per-repetition run times given in seconds. Percentiles
// interpolate linearly between order statistics.
v1::Timing SummarizeTimes(std::vector<double> seconds);

// The q-quantile (0..1) of sorted, non-empty values, interpolated linearly.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace tiletune::tuner
