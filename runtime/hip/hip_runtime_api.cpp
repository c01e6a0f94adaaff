#include "runtime/hip/hip_runtime_api.h"

namespace tiletune::runtime::hip {

std::string HipRuntimeApi::Describe(std::string_view call, hipError_t error) const {
  const char* name = hipGetErrorName(error);
  const char* text = hipGetErrorString(error);
  std::string out =
      std::string(call) + ": " + (name ? std::string(name) : "hipError " + std::to_string(error));
  // HIP 5.x answers the name for both; say it once.
  if (text && (!name || std::string_view(text) != name)) out += " (" + std::string(text) + ")";
  return out;
}

std::unique_ptr<HipRuntimeApi> OpenHipRuntimeApi(std::string* why) {
  std::string tried;
  auto library = OpenSharedLibrary(
      {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", "/opt/rocm/lib/libamdhip64.so"},
      "hipInit", &tried);
  if (!library) {
    *why = "libamdhip64 not found: " + tried;
    return nullptr;
  }
  auto api = std::make_unique<HipRuntimeApi>();
  api->library = *library;
  std::string missing;
  const auto& lib = api->library;
  bool ok = true;
  ok &= ResolveSymbol(lib, "hipInit", &api->hipInit, &missing);
  ok &= ResolveSymbol(lib, "hipDriverGetVersion", &api->hipDriverGetVersion, &missing);
  ok &= ResolveSymbol(lib, "hipRuntimeGetVersion", &api->hipRuntimeGetVersion, &missing);
  ok &= ResolveSymbol(lib, "hipGetDeviceCount", &api->hipGetDeviceCount, &missing);
  ok &= ResolveSymbol(lib, "hipDeviceGetAttribute", &api->hipDeviceGetAttribute, &missing);
  ok &= ResolveSymbol(lib, "hipDeviceGetName", &api->hipDeviceGetName, &missing);
  ok &= ResolveSymbol(lib, "hipDeviceTotalMem", &api->hipDeviceTotalMem, &missing);
  // HIP 6.x macro-maps the plain name to R0600 (a different layout) in its
  // headers, but exports R0000 by name; HIP 5.x has only the plain name.
  const char* properties = FindSymbol(lib, "hipGetDevicePropertiesR0000")
                               ? "hipGetDevicePropertiesR0000"
                               : "hipGetDeviceProperties";
  ok &= ResolveSymbol(lib, properties, &api->hipGetDevicePropertiesR0000, &missing);
  ok &= ResolveSymbol(lib, "hipSetDevice", &api->hipSetDevice, &missing);
  ok &= ResolveSymbol(lib, "hipDeviceSynchronize", &api->hipDeviceSynchronize, &missing);
  ok &= ResolveSymbol(lib, "hipModuleLoadData", &api->hipModuleLoadData, &missing);
  ok &= ResolveSymbol(lib, "hipModuleUnload", &api->hipModuleUnload, &missing);
  ok &= ResolveSymbol(lib, "hipModuleGetFunction", &api->hipModuleGetFunction, &missing);
  ok &= ResolveSymbol(lib, "hipModuleLaunchKernel", &api->hipModuleLaunchKernel, &missing);
  ok &= ResolveSymbol(lib, "hipMalloc", &api->hipMalloc, &missing);
  ok &= ResolveSymbol(lib, "hipFree", &api->hipFree, &missing);
  ok &= ResolveSymbol(lib, "hipMemcpyHtoD", &api->hipMemcpyHtoD, &missing);
  ok &= ResolveSymbol(lib, "hipMemcpyDtoH", &api->hipMemcpyDtoH, &missing);
  ok &= ResolveSymbol(lib, "hipMemset", &api->hipMemset, &missing);
  ok &= ResolveSymbol(lib, "hipEventCreate", &api->hipEventCreate, &missing);
  ok &= ResolveSymbol(lib, "hipEventRecord", &api->hipEventRecord, &missing);
  ok &= ResolveSymbol(lib, "hipEventSynchronize", &api->hipEventSynchronize, &missing);
  ok &= ResolveSymbol(lib, "hipEventElapsedTime", &api->hipEventElapsedTime, &missing);
  ok &= ResolveSymbol(lib, "hipEventDestroy", &api->hipEventDestroy, &missing);
  ok &= ResolveSymbol(lib, "hipGetErrorName", &api->hipGetErrorName, &missing);
  ok &= ResolveSymbol(lib, "hipGetErrorString", &api->hipGetErrorString, &missing);
  if (!ok) {
    *why = lib.name + " lacks " + missing;
    return nullptr;
  }
  return api;
}

std::string HipVersionString(int version) {
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100) + "." +
         std::to_string(version % 100000);
}

}  // namespace tiletune::runtime::hip
