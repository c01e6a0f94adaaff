#include "kernels/core/device_description.h"

#include <algorithm>
#include <stdexcept>

namespace tiletune::kernels {

const DeviceDescription& CompileTargetOf(std::string_view backend) {
  for (const DeviceDescription* d : {&kH200, &kMi200, &kHostCpu}) {
    if (d->backend == backend) return *d;
  }
  throw std::invalid_argument("no compile target for backend '" + std::string(backend) + "'");
}

int64_t RegistersPerLane(int64_t max_registers_per_lane, int64_t warp_size, int64_t threads) {
  const int64_t warps = (threads + warp_size - 1) / warp_size;
  const int64_t per_simd = (warps + kSimdsPerMultiprocessor - 1) / kSimdsPerMultiprocessor;
  return std::min(max_registers_per_lane, kSimdRegistersPerLane / std::max<int64_t>(1, per_simd));
}

int64_t RegistersPerLane(const DeviceDescription& device, int64_t threads) {
  return RegistersPerLane(device.max_registers_per_lane, device.warp_size, threads);
}

const DeviceDescription* NamedDeviceOfArch(std::string_view arch) {
  for (const DeviceDescription* d : {&kH200, &kMi200, &kMi300x, &kMi355x, &kHostCpu}) {
    if (d->arch == arch) return d;
  }
  return nullptr;
}

}  // namespace tiletune::kernels
