#pragma once

#include <cstdint>
#include <optional>

#include "tiletune/v1/kernel_key.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::tuner {

// The ceilings of a device we know, for the math unit `key`'s kernel runs on:
// tensor cores for an f16/bf16 gemm (and tf32 when allowed), plain f32
// otherwise. Nullopt for a device or unit we have no honest figure for (the
// host CPU): its roofline fraction stays unknown.
std::optional<v1::DeviceCeilings> KnownCeilings(const v1::DeviceFingerprint& device,
                                                const v1::KernelKey& key);

// `flops` and `bytes` done in `median_us`: the achieved rates always, the
// fraction of the floor when `ceilings` are known. Empty without a time.
v1::Roofline RooflineOf(int64_t flops, int64_t bytes, double median_us,
                        const std::optional<v1::DeviceCeilings>& ceilings);

// The roofline of `key` measured in `median_us` on `device`.
v1::Roofline RooflineOf(const v1::KernelKey& key, const v1::DeviceFingerprint& device,
                        double median_us);

}  // namespace tiletune::tuner
