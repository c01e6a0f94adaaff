#include "tuner/worker/element_codec.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/core/kernel_key.h"
#include "tuner/worker/output_validation.h"

namespace tiletune::tuner {
namespace {

// Quiet NaNs whose payloads arithmetic does not produce.
constexpr uint16_t kPoisonBf16 = 0x7fc5;
constexpr uint16_t kPoisonF16 = 0x7e5d;

uint16_t ToBf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest, ties to even, on the 16 bits that are dropped.
  const uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(rounded >> 16);
}

float FromBf16(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

#ifdef __FLT16_MANT_DIG__  // the compiler has _Float16 (GCC 12; clang from 15 on x86)
uint16_t ToF16(float value) {
  return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
}

float FromF16(uint16_t bits) {
  return static_cast<float>(std::bit_cast<_Float16>(bits));
}
#else  // clang 14, the fuzz build: the same conversions by hand
uint16_t ToF16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t x = bits & 0x7fffffff;
  if (x > 0x7f800000) return sign | 0x7e00 | ((x >> 13) & 0x3ff);  // NaN, payload kept
  if (x >= 0x477ff000) return sign | 0x7c00;                       // rounds past 65504
  // Round to nearest, ties to even, dropping `shift` bits of `m`.
  const auto round = [](uint32_t m, int shift) {
    uint32_t kept = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) ++kept;
    return kept;
  };
  if (x >= 0x38800000) return sign | static_cast<uint16_t>(round(x - 0x38000000, 13));
  if (x < 0x33000000) return sign;  // below half the smallest subnormal
  const int exponent = static_cast<int>(x >> 23);
  return sign | static_cast<uint16_t>(round((x & 0x7fffff) | 0x800000, 126 - exponent));
}

float FromF16(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}
#endif

// An element type's bits: the poison, the exponent that makes a value NaN
// or infinite, and -inf.
template <class Bits>
struct SpecialBits {
  Bits poison, exponent, negative_infinity;
};
constexpr SpecialBits<uint32_t> kF32Bits{kPoisonBits, 0x7f800000, 0xff800000};
constexpr SpecialBits<uint16_t> kBf16Bits{kPoisonBf16, 0x7f80, 0xff80};
constexpr SpecialBits<uint16_t> kF16Bits{kPoisonF16, 0x7c00, 0xfc00};

template <class Bits>
ElementCensus Census(std::span<const std::byte> bytes, SpecialBits<Bits> special,
                     bool negative_infinity_allowed) {
  ElementCensus census;
  const size_t count = bytes.size() / sizeof(Bits);
  for (size_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, bytes.data() + i * sizeof(Bits), sizeof(Bits));
    if ((bits & special.exponent) != special.exponent) continue;  // finite: the common case
    if (bits == special.poison) {
      ++census.poisoned;
    } else if (!(negative_infinity_allowed && bits == special.negative_infinity)) {
      ++census.non_finite;
    }
  }
  return census;
}

template <class Bits>
std::vector<std::byte> Filled(size_t count, Bits bits) {
  std::vector<std::byte> out(count * sizeof(Bits));
  for (size_t i = 0; i < count; ++i)
    std::memcpy(out.data() + i * sizeof(Bits), &bits, sizeof(Bits));
  return out;
}

bool IsPoison(float value) {
  return std::bit_cast<uint32_t>(value) == kPoisonBits;
}

void RequireKnown(v1::DType dtype) {
  if (dtype != v1::DTYPE_F32 && dtype != v1::DTYPE_F16 && dtype != v1::DTYPE_BF16) {
    throw std::invalid_argument("the worker handles f32, f16 and bf16 tensors, not " +
                                std::string(kernels::DTypeName(dtype)));
  }
}

}  // namespace

size_t ElementBytes(v1::DType dtype) {
  RequireKnown(dtype);
  return dtype == v1::DTYPE_F32 ? 4 : 2;
}

float RoundToDType(float value, v1::DType dtype) {
  RequireKnown(dtype);
  if (dtype == v1::DTYPE_BF16) return FromBf16(ToBf16(value));
  if (dtype == v1::DTYPE_F16) return FromF16(ToF16(value));
  return value;
}

std::vector<std::byte> EncodeElements(std::span<const float> values, v1::DType dtype) {
  std::vector<std::byte> out(values.size() * ElementBytes(dtype));
  if (dtype == v1::DTYPE_F32) {
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits;
    if (IsPoison(values[i])) {
      bits = dtype == v1::DTYPE_BF16 ? kPoisonBf16 : kPoisonF16;
    } else {
      bits = dtype == v1::DTYPE_BF16 ? ToBf16(values[i]) : ToF16(values[i]);
    }
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
  return out;
}

std::vector<float> DecodeElements(std::span<const std::byte> bytes, v1::DType dtype) {
  const size_t size = ElementBytes(dtype);
  std::vector<float> out(bytes.size() / size);
  if (dtype == v1::DTYPE_F32) {
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
  }
  const uint16_t poison = dtype == v1::DTYPE_BF16 ? kPoisonBf16 : kPoisonF16;
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    if (bits == poison) {
      out[i] = PoisonValue();
    } else {
      out[i] = dtype == v1::DTYPE_BF16 ? FromBf16(bits) : FromF16(bits);
    }
  }
  return out;
}

std::vector<std::byte> PoisonElements(size_t count, v1::DType dtype) {
  RequireKnown(dtype);
  if (dtype == v1::DTYPE_F32) return Filled(count, kF32Bits.poison);
  return Filled(count, dtype == v1::DTYPE_BF16 ? kBf16Bits.poison : kF16Bits.poison);
}

ElementCensus CountPoisonedAndNonFinite(std::span<const std::byte> bytes, v1::DType dtype,
                                        bool negative_infinity_allowed) {
  RequireKnown(dtype);
  if (dtype == v1::DTYPE_F32) return Census(bytes, kF32Bits, negative_infinity_allowed);
  return Census(bytes, dtype == v1::DTYPE_BF16 ? kBf16Bits : kF16Bits, negative_infinity_allowed);
}

}  // namespace tiletune::tuner
