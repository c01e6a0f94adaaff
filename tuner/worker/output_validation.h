#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tiletune::tuner {

// Outputs are filled with this quiet NaN before a validated run: arithmetic
// never produces its payload, so an element still holding it was never
// written (or was only ever computed from unwritten elements).
inline constexpr uint32_t kPoisonBits = 0x7fc5eed5;
float PoisonValue();

struct OutputCheck {
  bool ok = false;
  double rel_error = 0;    // ||out - ref||_2 / ||ref||_2 over written elements
  int64_t unwritten = 0;   // elements still holding the poison
  int64_t non_finite = 0;  // other NaN or infinite elements
  std::string error;       // why not ok, with the numbers
};

// Checks a kernel's output against the float64 reference: every element
// written, all finite, and relative L2 error within `tolerance` (absolute
// L2 error when the reference is all zeros).
OutputCheck CheckOutput(std::span<const float> out, std::span<const double> ref, double tolerance);

}  // namespace tiletune::tuner
