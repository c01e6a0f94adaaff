#include "runtime/cuda/cuda_driver_api.h"

#include <dlfcn.h>

#include <initializer_list>

namespace tiletune::runtime::cuda {
namespace {

// Points `fn` at the first of `names` the library exports (a newer ABI
// version first, where the driver may predate it); false when none is there.
template <typename Fn>
bool Resolve(void* library, Fn*& fn, std::initializer_list<const char*> names,
             std::string* missing) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(library, name)) {
      fn = reinterpret_cast<Fn*>(symbol);
      return true;
    }
  }
  *missing = *names.begin();
  return false;
}

bool ResolveAll(void* lib, CudaDriverApi& api, std::string* missing) {
  return Resolve(lib, api.cuInit, {"cuInit"}, missing) &&
         Resolve(lib, api.cuDriverGetVersion, {"cuDriverGetVersion"}, missing) &&
         Resolve(lib, api.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
         Resolve(lib, api.cuDeviceGet, {"cuDeviceGet"}, missing) &&
         Resolve(lib, api.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
         Resolve(lib, api.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
         Resolve(lib, api.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"}, missing) &&
         Resolve(lib, api.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
         Resolve(lib, api.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"}, missing) &&
         Resolve(lib, api.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
         Resolve(lib, api.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
         Resolve(lib, api.cuModuleLoadData, {"cuModuleLoadData"}, missing) &&
         Resolve(lib, api.cuModuleUnload, {"cuModuleUnload"}, missing) &&
         Resolve(lib, api.cuModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
         Resolve(lib, api.cuFuncSetAttribute, {"cuFuncSetAttribute"}, missing) &&
         Resolve(lib, api.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
         Resolve(lib, api.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
         Resolve(lib, api.cuMemFree, {"cuMemFree_v2"}, missing) &&
         Resolve(lib, api.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
         Resolve(lib, api.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
         Resolve(lib, api.cuMemsetD8, {"cuMemsetD8_v2"}, missing) &&
         Resolve(lib, api.cuEventCreate, {"cuEventCreate"}, missing) &&
         Resolve(lib, api.cuEventRecord, {"cuEventRecord"}, missing) &&
         Resolve(lib, api.cuEventSynchronize, {"cuEventSynchronize"}, missing) &&
         // _v2 arrived with CUDA 12.8; older drivers have only the first one.
         Resolve(lib, api.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
                 missing) &&
         Resolve(lib, api.cuEventDestroy, {"cuEventDestroy_v2"}, missing) &&
         Resolve(lib, api.cuGetErrorName, {"cuGetErrorName"}, missing) &&
         Resolve(lib, api.cuGetErrorString, {"cuGetErrorString"}, missing);
}

}  // namespace

std::unique_ptr<CudaDriver> CudaDriver::Open(std::string* why) {
  std::string errors;
  for (const char* name : {"libcuda.so.1", "libcuda.so"}) {
    void* library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* error = ::dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(error ? error : name);
      continue;
    }
    CudaDriverApi api{};
    std::string missing;
    if (!ResolveAll(library, api, &missing)) {
      ::dlclose(library);
      *why = std::string(name) + " has no entry point " + missing + " (driver too old?)";
      return nullptr;
    }
    return std::unique_ptr<CudaDriver>(new CudaDriver(api));
  }
  *why = "driver library not found: " + errors;
  return nullptr;
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
