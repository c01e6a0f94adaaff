#include "device_executor.h"

#include <algorithm>

#include "runtime/cuda/cuda_executor.h"
#include "runtime/hip/hip_executor.h"
#include "runtime/host/host_executor.h"

namespace tiletune::runtime {

std::optional<std::string> DeviceExecutor::LoadVendor(const VendorCall& call) {
  return "the " + std::string(backend()) + " executor calls no vendor library (asked for " +
         call.library + ")";
}

std::optional<v1::VendorAlgorithm> DeviceExecutor::VendorAlgorithmRun() const {
  return std::nullopt;
}

void SetLaunchGeometry(const v1::LaunchGeometry& launch, int compute_units, KernelArguments& args) {
  for (int i = 0; i < 3; ++i) {
    args.grid[i] = i < launch.grid_size() ? static_cast<uint32_t>(launch.grid(i)) : 1;
    args.block[i] = i < launch.block_size() ? static_cast<uint32_t>(launch.block(i)) : 1;
  }
  if (launch.blocks_per_compute_unit() > 0) {
    const int64_t persistent =
        int64_t{launch.blocks_per_compute_unit()} * std::max(1, compute_units);
    args.grid[0] = static_cast<uint32_t>(std::min<int64_t>(args.grid[0], persistent));
  }
  args.shared_memory_bytes = static_cast<uint32_t>(launch.shared_memory_bytes());
  args.tensor_maps = launch.tensor_maps();
  args.argument_bytes = launch.argument_bytes();
}

std::optional<std::string> TensorMapsRefusal(std::string_view backend,
                                             const KernelArguments& args) {
  if (args.tensor_maps.empty()) return std::nullopt;
  std::string tensors;
  for (const auto& map : args.tensor_maps) tensors += (tensors.empty() ? "" : ", ") + map.tensor();
  return "the " + std::string(backend) + " executor encodes no tensor maps (TMA is CUDA's, " +
         "sm_90+), and the kernel's argument carries maps of " + tensors;
}

std::unique_ptr<DeviceExecutor> OpenDeviceExecutor(std::string_view backend, std::string* why) {
  if (backend == "host") return std::make_unique<host::HostExecutor>();
  if (backend == "cuda") return cuda::CudaExecutor::Open(why);
  if (backend == "hip") return hip::HipExecutor::Open(why);
  *why = "backend '" + std::string(backend) + "' has no executor in this build";
  return nullptr;
}

}  // namespace tiletune::runtime
