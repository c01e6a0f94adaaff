#include "tuner/roofline.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"

namespace tiletune::tuner {
namespace {

// The math units a kernel's FLOPs run on; their ceilings differ by up to 15x.
enum class MathUnit { kTensor16, kTf32, kF32Gemm, kF32 };

MathUnit UnitOf(const v1::KernelKey& key) {
  // Only matmuls and attention's two products run on matrix units; row and
  // element-wise ops compute in f32.
  const kernels::FusionKind fusion = kernels::OpSpecOf(key.op()).fusion;
  if (fusion != kernels::FusionKind::kMatmul && fusion != kernels::FusionKind::kAttention) {
    return MathUnit::kF32;
  }
  if (key.input_dtype() == v1::DTYPE_F16 || key.input_dtype() == v1::DTYPE_BF16) {
    return MathUnit::kTensor16;
  }
  return key.allow_tf32() ? MathUnit::kTf32 : MathUnit::kF32Gemm;
}

struct Ceiling {
  double tflops;  // 0: no figure for this unit
  std::string_view source;
};

// One device model: matched by arch and a part of its reported name (the
// first match wins, so a longer name comes before its prefix).
struct KnownDevice {
  std::string_view arch;
  std::string_view name_part;
  Ceiling tensor16, tf32, f32_gemm, f32;
  double tbps;
  std::string_view bandwidth_source;
};

// Measured figures where we have them (the lent H200), datasheet dense
// figures otherwise. ROCm shows each GCD of an MI250/MI250X as its own
// device, so those are half the card's datasheet figures.
constexpr std::array kKnownDevices = {
    KnownDevice{"sm_90",
                "H200",
                {790,
                 "790 TFLOP/s bf16/f16: shared/design/TARGETS.md working ceiling (cuBLAS "
                 "measured 672-712; datasheet H200 SXM dense 989)"},
                {494, "datasheet H200 SXM tf32 dense 494 TFLOP/s"},
                {67, "datasheet H200 SXM f32 67 TFLOP/s"},
                {67, "datasheet H200 SXM f32 67 TFLOP/s"},
                4.24,
                "measured device-to-device copy 4.24 TB/s (shared/design/TARGETS.md, 2026-12-01)"},
    KnownDevice{"sm_90",
                "H100 80GB HBM3",
                {989, "datasheet H100 SXM bf16/f16 dense 989 TFLOP/s"},
                {494, "datasheet H100 SXM tf32 dense 494 TFLOP/s"},
                {67, "datasheet H100 SXM f32 67 TFLOP/s"},
                {67, "datasheet H100 SXM f32 67 TFLOP/s"},
                3.35,
                "datasheet H100 SXM HBM3 3.35 TB/s"},
    KnownDevice{"gfx90a",
                "MI250X",
                {191.5, "datasheet MI250X bf16/f16 matrix 383 TFLOP/s, per GCD 191.5"},
                {0, ""},
                {47.9, "datasheet MI250X f32 matrix 95.7 TFLOP/s, per GCD 47.9"},
                {23.9, "datasheet MI250X f32 vector 47.9 TFLOP/s, per GCD 23.9"},
                1.64,
                "datasheet MI250X HBM2e 3.28 TB/s, per GCD 1.64"},
    KnownDevice{"gfx90a",
                "MI250",
                {181, "datasheet MI250 bf16/f16 matrix 362 TFLOP/s, per GCD 181"},
                {0, ""},
                {45.3, "datasheet MI250 f32 matrix 90.5 TFLOP/s, per GCD 45.3"},
                {22.6, "datasheet MI250 f32 vector 45.3 TFLOP/s, per GCD 22.6"},
                1.64,
                "datasheet MI250 HBM2e 3.28 TB/s, per GCD 1.64"},
    KnownDevice{"gfx90a",
                "MI210",
                {181, "datasheet MI210 bf16/f16 matrix 181 TFLOP/s"},
                {0, ""},
                {45.3, "datasheet MI210 f32 matrix 45.3 TFLOP/s"},
                {22.6, "datasheet MI210 f32 vector 22.6 TFLOP/s"},
                1.64,
                "datasheet MI210 HBM2e 1.64 TB/s"},
};

}  // namespace

std::optional<v1::DeviceCeilings> KnownCeilings(const v1::DeviceFingerprint& device,
                                                const v1::KernelKey& key) {
  for (const auto& known : kKnownDevices) {
    if (device.arch() != known.arch || device.name().find(known.name_part) == std::string::npos) {
      continue;
    }
    const Ceiling& ceiling = [&]() -> const Ceiling& {
      switch (UnitOf(key)) {
        case MathUnit::kTensor16: return known.tensor16;
        case MathUnit::kTf32: return known.tf32;
        case MathUnit::kF32Gemm: return known.f32_gemm;
        case MathUnit::kF32: return known.f32;
      }
      return known.f32;
    }();
    if (ceiling.tflops <= 0) return std::nullopt;
    v1::DeviceCeilings ceilings;
    ceilings.set_peak_tflops(ceiling.tflops);
    ceilings.set_peak_bandwidth_tbps(known.tbps);
    ceilings.set_source(std::string(ceiling.source) + "; " + std::string(known.bandwidth_source));
    return ceilings;
  }
  return std::nullopt;
}

v1::Roofline RooflineOf(int64_t flops, int64_t bytes, double median_us,
                        const std::optional<v1::DeviceCeilings>& ceilings) {
  v1::Roofline roofline;
  if (median_us <= 0) return roofline;
  roofline.set_flops(flops);
  roofline.set_bytes(bytes);
  // Per microsecond to per second, and to units of 1e12.
  roofline.set_achieved_tflops(static_cast<double>(flops) / median_us * 1e-6);
  roofline.set_achieved_tbps(static_cast<double>(bytes) / median_us * 1e-6);
  if (ceilings && ceilings->peak_tflops() > 0 && ceilings->peak_bandwidth_tbps() > 0) {
    const double floor_us = std::max(static_cast<double>(flops) / ceilings->peak_tflops(),
                                     static_cast<double>(bytes) / ceilings->peak_bandwidth_tbps()) *
                            1e-6;
    roofline.set_fraction_of_floor(floor_us / median_us);
    *roofline.mutable_ceilings() = *ceilings;
  }
  return roofline;
}

v1::Roofline RooflineOf(const v1::KernelKey& key, const v1::DeviceFingerprint& device,
                        double median_us) {
  return RooflineOf(kernels::ProblemFlops(key), kernels::ProblemBytes(key), median_us,
                    KnownCeilings(device, key));
}

}  // namespace tiletune::tuner
