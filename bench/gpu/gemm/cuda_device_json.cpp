#include "bench/gpu/gemm/cuda_device_json.h"

#include <stdexcept>

namespace tiletune::bench {

namespace cu = runtime::cuda;

nlohmann::json CudaDeviceJson(const cu::CudaDriver& driver, std::string* arch) {
  const cu::CudaDriverApi& api = driver.api();
  auto check = [&](cu::CUresult r, const char* call) {
    if (r != cu::CUDA_SUCCESS) throw std::runtime_error(driver.Describe(r, call));
  };
  cu::CUdevice device = 0;
  check(api.cuDeviceGet(&device, 0), "cuDeviceGet(0)");
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof(name), device), "cuDeviceGetName");
  int major = 0, minor = 0, driver_version = 0;
  check(api.cuDeviceGetAttribute(&major, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  check(api.cuDeviceGetAttribute(&minor, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  check(api.cuDriverGetVersion(&driver_version), "cuDriverGetVersion");
  *arch = "sm_" + std::to_string(major) + std::to_string(minor);
  return {{"name", name}, {"arch", *arch}, {"driver_version", driver_version}};
}

}  // namespace tiletune::bench
