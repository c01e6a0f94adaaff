#include "device_executor.h"

#include "runtime/cuda/cuda_executor.h"
#include "runtime/hip/hip_executor.h"
#include "runtime/host/host_executor.h"

namespace tiletune::runtime {

std::optional<std::string> DeviceExecutor::LoadVendor(const VendorCall& call) {
  return "the " + std::string(backend()) + " executor calls no vendor library (asked for " +
         call.library + ")";
}

std::unique_ptr<DeviceExecutor> OpenDeviceExecutor(std::string_view backend, std::string* why) {
  if (backend == "host") return std::make_unique<host::HostExecutor>();
  if (backend == "cuda") return cuda::CudaExecutor::Open(why);
  if (backend == "hip") return hip::HipExecutor::Open(why);
  *why = "backend '" + std::string(backend) + "' has no executor in this build";
  return nullptr;
}

}  // namespace tiletune::runtime
