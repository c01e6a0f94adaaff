#include "device_executor.h"

#include "runtime/host/host_executor.h"

namespace tiletune::runtime {

std::unique_ptr<DeviceExecutor> OpenDeviceExecutor(std::string_view backend, std::string* why) {
  if (backend == "host") return std::make_unique<host::HostExecutor>();
  // cuda and hip executors are added here with their backends.
  *why = "backend '" + std::string(backend) + "' has no executor in this build";
  return nullptr;
}

}  // namespace tiletune::runtime
