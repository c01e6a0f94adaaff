#include "runtime/cuda/cuda_driver_api.h"

#include "runtime/shared_library.h"

namespace tiletune::runtime::cuda {
namespace {

bool ResolveAll(const SharedLibrary& lib, CudaDriverApi& api, std::string* missing) {
  bool ok = true;
  ok &= ResolveSymbol(lib, "cuInit", &api.cuInit, missing);
  ok &= ResolveSymbol(lib, "cuDriverGetVersion", &api.cuDriverGetVersion, missing);
  ok &= ResolveSymbol(lib, "cuDeviceGetCount", &api.cuDeviceGetCount, missing);
  ok &= ResolveSymbol(lib, "cuDeviceGet", &api.cuDeviceGet, missing);
  ok &= ResolveSymbol(lib, "cuDeviceGetName", &api.cuDeviceGetName, missing);
  ok &= ResolveSymbol(lib, "cuDeviceGetAttribute", &api.cuDeviceGetAttribute, missing);
  ok &= ResolveSymbol(lib, "cuDeviceTotalMem_v2", &api.cuDeviceTotalMem, missing);
  ok &= ResolveSymbol(lib, "cuDevicePrimaryCtxRetain", &api.cuDevicePrimaryCtxRetain, missing);
  ok &= ResolveSymbol(lib, "cuDevicePrimaryCtxRelease_v2", &api.cuDevicePrimaryCtxRelease, missing);
  ok &= ResolveSymbol(lib, "cuCtxSetCurrent", &api.cuCtxSetCurrent, missing);
  ok &= ResolveSymbol(lib, "cuCtxGetCurrent", &api.cuCtxGetCurrent, missing);
  ok &= ResolveSymbol(lib, "cuCtxGetDevice", &api.cuCtxGetDevice, missing);
  ok &= ResolveSymbol(lib, "cuCtxSynchronize", &api.cuCtxSynchronize, missing);
  ok &= ResolveSymbol(lib, "cuModuleLoadData", &api.cuModuleLoadData, missing);
  ok &= ResolveSymbol(lib, "cuModuleUnload", &api.cuModuleUnload, missing);
  ok &= ResolveSymbol(lib, "cuModuleGetFunction", &api.cuModuleGetFunction, missing);
  ok &= ResolveSymbol(lib, "cuFuncSetAttribute", &api.cuFuncSetAttribute, missing);
  ok &= ResolveSymbol(lib, "cuLaunchKernel", &api.cuLaunchKernel, missing);
  ok &= ResolveSymbol(lib, "cuMemAlloc_v2", &api.cuMemAlloc, missing);
  ok &= ResolveSymbol(lib, "cuMemFree_v2", &api.cuMemFree, missing);
  ok &= ResolveSymbol(lib, "cuMemcpyHtoD_v2", &api.cuMemcpyHtoD, missing);
  ok &= ResolveSymbol(lib, "cuMemcpyDtoH_v2", &api.cuMemcpyDtoH, missing);
  ok &= ResolveSymbol(lib, "cuMemsetD8_v2", &api.cuMemsetD8, missing);
  ok &= ResolveSymbol(lib, "cuEventCreate", &api.cuEventCreate, missing);
  ok &= ResolveSymbol(lib, "cuEventRecord", &api.cuEventRecord, missing);
  ok &= ResolveSymbol(lib, "cuEventSynchronize", &api.cuEventSynchronize, missing);
  ok &= ResolveSymbol(lib, "cuEventDestroy_v2", &api.cuEventDestroy, missing);
  ok &= ResolveSymbol(lib, "cuTensorMapEncodeTiled", &api.cuTensorMapEncodeTiled, missing);
  ok &= ResolveSymbol(lib, "cuGetErrorName", &api.cuGetErrorName, missing);
  ok &= ResolveSymbol(lib, "cuGetErrorString", &api.cuGetErrorString, missing);
  // _v2 arrived with CUDA 12.8; older drivers have only the first one.
  const char* elapsed =
      FindSymbol(lib, "cuEventElapsedTime_v2") ? "cuEventElapsedTime_v2" : "cuEventElapsedTime";
  ok &= ResolveSymbol(lib, elapsed, &api.cuEventElapsedTime, missing);
  return ok;
}

}  // namespace

std::unique_ptr<CudaDriver> CudaDriver::Open(std::string* why) {
  std::string tried;
  const auto library = OpenSharedLibrary({"libcuda.so.1", "libcuda.so"}, "cuInit", &tried);
  if (!library) {
    *why = "driver library not found: " + tried;
    return nullptr;
  }
  CudaDriverApi api{};
  std::string missing;
  if (!ResolveAll(*library, api, &missing)) {
    *why = library->name + " has no entry point " + missing + " (driver too old?)";
    return nullptr;
  }
  return std::unique_ptr<CudaDriver>(new CudaDriver(api));
}

std::string CudaDriver::ErrorName(CUresult result) const {
  const char* name = nullptr;
  if (api_.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) {
    return "CUresult " + std::to_string(result);
  }
  return name;
}

std::string CudaDriver::Describe(CUresult result, const std::string& call) const {
  std::string message = call + " failed: " + ErrorName(result);
  const char* text = nullptr;
  if (api_.cuGetErrorString(result, &text) == CUDA_SUCCESS && text) {
    message += std::string(" (") + text + ")";
  }
  return message;
}

bool CudaDriver::IsSticky(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: return true;
    default: return false;
  }
}

}  // namespace tiletune::runtime::cuda
