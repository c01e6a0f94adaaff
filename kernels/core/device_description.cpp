#include "kernels/core/device_description.h"

#include <stdexcept>

namespace tiletune::kernels {

const DeviceDescription& CompileTargetOf(std::string_view backend) {
  for (const DeviceDescription* d : {&kH200, &kMi200, &kHostCpu}) {
    if (d->backend == backend) return *d;
  }
  throw std::invalid_argument("no compile target for backend '" + std::string(backend) + "'");
}

const DeviceDescription* NamedDeviceOfArch(std::string_view arch) {
  for (const DeviceDescription* d : {&kH200, &kMi200, &kMi300x, &kMi355x, &kHostCpu}) {
    if (d->arch == arch) return d;
  }
  return nullptr;
}

}  // namespace tiletune::kernels
