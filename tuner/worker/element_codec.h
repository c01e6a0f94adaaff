#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::tuner {

// Bytes of one element of `dtype` (f32, f16, bf16).
size_t ElementBytes(v1::DType dtype);

// `value` as `dtype` holds it (round to nearest even), back in float: inputs
// are drawn in float, rounded, and the float64 reference sees exactly what
// the kernel sees.
float RoundToDType(float value, v1::DType dtype);

// Tensors as the device stores them. The poison value (output_validation.h)
// maps to a 16-bit NaN with its own payload and back, so unwritten 16-bit
// outputs are still told apart from computed NaNs.
std::vector<std::byte> EncodeElements(std::span<const float> values, v1::DType dtype);
std::vector<float> DecodeElements(std::span<const std::byte> bytes, v1::DType dtype);

// `count` elements of the poison, encoded: an output's fill before a
// validated run.
std::vector<std::byte> PoisonElements(size_t count, v1::DType dtype);

// How many encoded elements still hold the poison and how many are other
// NaNs or infinities (-inf not counted where allowed), read off the bits
// without decoding: a whole output is scanned after every validated run.
struct ElementCensus {
  int64_t poisoned = 0;
  int64_t non_finite = 0;
};
ElementCensus CountPoisonedAndNonFinite(std::span<const std::byte> bytes, v1::DType dtype,
                                        bool negative_infinity_allowed);

}  // namespace tiletune::tuner
