#include "output_validation.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tuner/worker/element_codec.h"

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

OutputCheck CheckOutput(std::span<const std::byte> out, v1::DType dtype, const Reference& ref,
                        double tolerance) {
  OutputCheck check;
  const auto n = static_cast<size_t>(ref.row_elements);
  const size_t element_bytes = ElementBytes(dtype);
  const size_t elements = out.size() / element_bytes;
  if (elements != static_cast<size_t>(ref.output_rows) * n) {
    check.error = "output has " + std::to_string(elements) + " elements, the reference " +
                  std::to_string(ref.output_rows * ref.row_elements);
    return check;
  }
  const auto negative_infinity = [&](double v) {
    return ref.negative_infinity_allowed && std::isinf(v) && v < 0;
  };
  const ElementCensus census = CountPoisonedAndNonFinite(out, dtype, ref.negative_infinity_allowed);
  check.unwritten = census.poisoned;
  check.non_finite = census.non_finite;
  int64_t infinity_mismatches = 0;
  double mismatch_got = 0, mismatch_want = 0;
  size_t mismatch_at = 0;
  double diff2 = 0, ref2 = 0, worst = -1, worst_got = 0, worst_want = 0;
  size_t worst_at = 0;
  for (size_t ri = 0; ri < ref.rows.size(); ++ri) {
    const size_t first = static_cast<size_t>(ref.rows[ri]) * n;
    const std::vector<float> row =
        DecodeElements(out.subspan(first * element_bytes, n * element_bytes), dtype);
    for (size_t c = 0; c < n; ++c) {
      const float got = row[c];
      const double want = ref.values[ri * n + c];
      // -inf where allowed must be exactly where the reference has it.
      if (negative_infinity(got) != negative_infinity(want)) {
        if (infinity_mismatches++ == 0) {
          mismatch_at = first + c;
          mismatch_got = got;
          mismatch_want = want;
        }
        continue;
      }
      if (!std::isfinite(got)) continue;  // counted above, or -inf as wanted
      const double d = got - want;
      diff2 += d * d;
      ref2 += want * want;
      ++check.checked;
      if (std::abs(d) > worst) {
        worst = std::abs(d);
        worst_at = first + c;
        worst_got = got;
        worst_want = want;
      }
    }
  }
  check.rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const std::string total = std::to_string(elements);
  const std::string sample =
      ref.sampled() ? " on " + std::to_string(ref.rows.size()) + " sampled rows" : "";
  if (check.unwritten > 0) {
    check.error =
        std::to_string(check.unwritten) + " of " + total + " output elements were never written";
  } else if (check.non_finite > 0) {
    check.error =
        std::to_string(check.non_finite) + " of " + total + " output elements are NaN or infinite";
  } else if (infinity_mismatches > 0) {
    check.error = std::to_string(infinity_mismatches) + " elements" + sample +
                  " are -inf where the reference is not, or the other way round (element " +
                  std::to_string(mismatch_at) + ": got " + Number(mismatch_got) + ", want " +
                  Number(mismatch_want) + ")";
  } else if (!(check.rel_error <= tolerance)) {
    check.error = "relative error " + Number(check.rel_error) + sample + " exceeds tolerance " +
                  Number(tolerance) + " (largest difference at element " +
                  std::to_string(worst_at) + ": got " + Number(worst_got) + ", want " +
                  Number(worst_want) + ")";
  } else {
    check.ok = true;
  }
  return check;
}

OutputCheck CheckOutput(std::span<const float> out, const Reference& ref, double tolerance) {
  return CheckOutput(std::as_bytes(out), v1::DTYPE_F32, ref, tolerance);
}

}  // namespace tiletune::tuner
