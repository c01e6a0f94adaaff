#include "output_validation.h"

#include <bit>
#include <cmath>
#include <cstdio>

namespace tiletune::tuner {
namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

float PoisonValue() {
  return std::bit_cast<float>(kPoisonBits);
}

OutputCheck CheckOutput(std::span<const float> out, std::span<const double> ref, double tolerance) {
  OutputCheck check;
  if (out.size() != ref.size()) {
    check.error = "output has " + std::to_string(out.size()) + " elements, the reference " +
                  std::to_string(ref.size());
    return check;
  }
  double diff2 = 0, ref2 = 0, worst = -1;
  size_t worst_at = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::bit_cast<uint32_t>(out[i]) == kPoisonBits) {
      ++check.unwritten;
      continue;
    }
    if (!std::isfinite(out[i])) {
      ++check.non_finite;
      continue;
    }
    const double d = out[i] - ref[i];
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    if (std::abs(d) > worst) {
      worst = std::abs(d);
      worst_at = i;
    }
  }
  check.rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const std::string total = std::to_string(out.size());
  if (check.unwritten > 0) {
    check.error =
        std::to_string(check.unwritten) + " of " + total + " output elements were never written";
  } else if (check.non_finite > 0) {
    check.error =
        std::to_string(check.non_finite) + " of " + total + " output elements are NaN or infinite";
  } else if (!(check.rel_error <= tolerance)) {
    check.error = "relative error " + Number(check.rel_error) + " exceeds tolerance " +
                  Number(tolerance) + " (largest difference at element " +
                  std::to_string(worst_at) + ": got " + Number(out[worst_at]) + ", want " +
                  Number(ref[worst_at]) + ")";
  } else {
    check.ok = true;
  }
  return check;
}

}  // namespace tiletune::tuner
