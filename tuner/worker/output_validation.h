#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tiletune/v1/kernel_key.pb.h"

#include "tuner/worker/host_reference.h"

namespace tiletune::tuner {

// Outputs are filled with this quiet NaN before a validated run: arithmetic
// never produces its payload, so an element still holding it was never
// written (or was only ever computed from unwritten elements).
inline constexpr uint32_t kPoisonBits = 0x7fc5eed5;
float PoisonValue();

struct OutputCheck {
  bool ok = false;
  double rel_error = 0;    // ||out - ref||_2 / ||ref||_2 over written, compared elements
  int64_t unwritten = 0;   // elements still holding the poison
  int64_t non_finite = 0;  // other NaN or infinite elements
  int64_t checked = 0;     // elements compared with the reference
  std::string error;       // why not ok, with the numbers
};

// Checks a kernel's whole output (row-major, every row of the problem, as
// the device stores `dtype`) against the float64 reference: every element
// written, all finite, and the relative L2 error over the reference's rows
// (all, or a sample) within `tolerance` (absolute L2 error when the
// reference is all zeros there). Only the reference's rows are decoded.
OutputCheck CheckOutput(std::span<const std::byte> out, v1::DType dtype, const Reference& ref,
                        double tolerance);
// The same for an f32 output.
OutputCheck CheckOutput(std::span<const float> out, const Reference& ref, double tolerance);

}  // namespace tiletune::tuner
