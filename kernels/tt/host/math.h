// Math the compiler can vectorize: libm's expf is an opaque call that keeps
// a loop scalar unless -ffast-math is on.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace tt {

// exp(x) within ~2 ulp: x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2
// split in two so n*ln2_hi is exact), e^r by its degree-7 Taylor polynomial,
// 2^n written into the exponent bits. Inputs are clamped to the range where
// the result stays a normal float. n is rounded by adding and subtracting
// 1.5 * 2^23 rather than by std::floor, which (under the default
// -ftrapping-math) keeps GCC from vectorizing the loop.
inline float fast_exp(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  constexpr float kRound = 0x1.8p23f;
  const float n = (x * 1.44269504f + kRound) - kRound;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

template <bool Fast>
inline float exp_of(float x) {
  if constexpr (Fast) {
    return fast_exp(x);
  } else {
    return std::exp(x);
  }
}

}  // namespace tt
