#pragma once

#include <optional>
#include <string>

#include "runtime/cuda/cuda_driver_api.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime::cuda {

// "sm_90" for compute capability 9.0.
std::string ComputeCapabilityArch(int major, int minor);

// The fingerprint of `device` (cuInit done): vendor "nvidia", arch from the
// compute capability, name, SM count, memory, L2 size, clock, the opted-in
// shared memory per block and the device class. nullopt with `why` naming the failed driver call.
std::optional<v1::DeviceFingerprint> ReadCudaFingerprint(const CudaDriver& driver, CUdevice device,
                                                         std::string* why);

}  // namespace tiletune::runtime::cuda
