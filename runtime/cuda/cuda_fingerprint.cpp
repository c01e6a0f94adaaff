#include "runtime/cuda/cuda_fingerprint.h"

#include <array>
#include <tuple>

#include "runtime/device_class.h"

namespace tiletune::runtime::cuda {

std::string ComputeCapabilityArch(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::optional<v1::DeviceFingerprint> ReadCudaFingerprint(const CudaDriver& driver, CUdevice device,
                                                         std::string* why) {
  const CudaDriverApi& api = driver.api();
  const auto failed = [&](CUresult result, const std::string& call) {
    *why = driver.Describe(result, call + " for device " + std::to_string(device));
    return std::nullopt;
  };
  const auto attribute = [&](int which, int* value) {
    return api.cuDeviceGetAttribute(value, which, device);
  };

  std::array<char, 256> name{};
  if (const CUresult r = api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), device);
      r != CUDA_SUCCESS) {
    return failed(r, "cuDeviceGetName");
  }
  int major = 0, minor = 0, sms = 0, l2 = 0;
  for (const auto& [which, value, what] :
       {std::tuple{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major, "compute capability"},
        std::tuple{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor, "compute capability"},
        std::tuple{CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms, "SM count"},
        std::tuple{CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2, "L2 size"}}) {
    if (const CUresult r = attribute(which, value); r != CUDA_SUCCESS) {
      return failed(r, std::string("cuDeviceGetAttribute(") + what + ")");
    }
  }
  // The clock is informational (not part of the device class) and newer
  // drivers may stop reporting it: 0 when unknown.
  int clock_khz = 0;
  if (attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &clock_khz) != CUDA_SUCCESS) clock_khz = 0;
  // What the search spaces size shared memory by; 0 (the arch's known
  // limit then) where the driver does not say.
  int max_shared = 0;
  if (attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &max_shared) !=
      CUDA_SUCCESS) {
    max_shared = 0;
  }
  size_t memory = 0;
  if (const CUresult r = api.cuDeviceTotalMem(&memory, device); r != CUDA_SUCCESS) {
    return failed(r, "cuDeviceTotalMem_v2");
  }

  v1::DeviceFingerprint fp;
  fp.set_vendor("nvidia");
  fp.set_arch(ComputeCapabilityArch(major, minor));
  fp.set_name(name.data());
  fp.set_compute_units(sms);
  fp.set_memory_bytes(static_cast<int64_t>(memory));
  fp.set_l2_bytes(l2);
  fp.set_clock_mhz(clock_khz / 1000);
  fp.set_max_shared_bytes_per_block(max_shared);
  fp.set_device_class(DeviceClassId(fp));
  return fp;
}

}  // namespace tiletune::runtime::cuda
