#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/shared_library.h"

// The part of the HIP runtime API (libamdhip64) that tiletune calls, declared
// here so that building needs no ROCm headers. Types, values and signatures
// mirror ROCm's <hip/hip_runtime_api.h> for the AMD platform; they are the
// same in HIP 5.x and 6.x (checked against Debian's ROCm 5.2 header and
// HIP 6's), except where a comment says otherwise.
namespace tiletune::runtime::hip {

using hipError_t = int;
inline constexpr hipError_t hipSuccess = 0;
inline constexpr hipError_t hipErrorOutOfMemory = 2;
inline constexpr hipError_t hipErrorNoDevice = 100;

using hipDevice_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipEvent_t = struct ihipEvent_t*;
using hipStream_t = struct ihipStream_t*;

// hipDeviceAttribute_t: only the values read here (unchanged from 5.x to 6.x).
using hipDeviceAttribute_t = int;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeClockRate = 5;  // kHz
inline constexpr hipDeviceAttribute_t hipDeviceAttributeL2CacheSize = 19;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeMultiprocessorCount = 63;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeWarpSize = 87;

// hipDeviceProp_t as HIP 5.x defines it, which HIP 6.x keeps as
// hipDeviceProp_tR0000 behind its legacy exports hipGetDeviceProperties and
// hipGetDevicePropertiesR0000. Only gcnArchName is read (no device attribute
// gives it): the fields before it are declared to place it, and the tail
// covers the remaining fields (792 bytes in all) with room to spare, so that
// a library writing a longer layout cannot overrun it.
struct hipDeviceProp_tR0000 {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  int memoryClockRate;
  int memoryBusWidth;
  size_t totalConstMem;
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  int computeMode;
  int clockInstructionRate;
  unsigned arch;  // hipDeviceArch_t: 17 one-bit fields
  int concurrentKernels;
  int pciDomainID;
  int pciBusID;
  int pciDeviceID;
  size_t maxSharedMemoryPerMultiProcessor;
  int isMultiGpuBoard;
  int canMapHostMemory;
  int gcnArch;
  char gcnArchName[256];  // "gfx90a:sramecc+:xnack-"
  unsigned char tail[792 - 652 + 2048];
};
static_assert(offsetof(hipDeviceProp_tR0000, gcnArchName) == 396 &&
                  offsetof(hipDeviceProp_tR0000, tail) == 652,
              "gcnArchName must sit where HIP 5.x puts it");

// The functions, resolved by name from the loaded library.
struct HipRuntimeApi {
  SharedLibrary library;

  hipError_t (*hipInit)(unsigned flags);
  hipError_t (*hipDriverGetVersion)(int* version);
  hipError_t (*hipRuntimeGetVersion)(int* version);
  hipError_t (*hipGetDeviceCount)(int* count);
  hipError_t (*hipDeviceGetAttribute)(int* value, hipDeviceAttribute_t attribute, int device);
  hipError_t (*hipDeviceGetName)(char* name, int length, hipDevice_t device);
  hipError_t (*hipDeviceTotalMem)(size_t* bytes, hipDevice_t device);
  // hipGetDevicePropertiesR0000 where the library has it (6.x), else
  // hipGetDeviceProperties (5.x): both fill the R0000 layout.
  hipError_t (*hipGetDevicePropertiesR0000)(hipDeviceProp_tR0000* properties, int device);
  hipError_t (*hipSetDevice)(int device);
  hipError_t (*hipDeviceSynchronize)();
  hipError_t (*hipModuleLoadData)(hipModule_t* module, const void* image);
  hipError_t (*hipModuleUnload)(hipModule_t module);
  hipError_t (*hipModuleGetFunction)(hipFunction_t* function, hipModule_t module, const char* name);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t function, unsigned grid_x, unsigned grid_y,
                                      unsigned grid_z, unsigned block_x, unsigned block_y,
                                      unsigned block_z, unsigned shared_memory_bytes,
                                      hipStream_t stream, void** kernel_params, void** extra);
  hipError_t (*hipMalloc)(void** pointer, size_t bytes);
  hipError_t (*hipFree)(void* pointer);
  hipError_t (*hipMemcpyHtoD)(hipDeviceptr_t dst, void* src, size_t bytes);
  hipError_t (*hipMemcpyDtoH)(void* dst, hipDeviceptr_t src, size_t bytes);
  hipError_t (*hipMemset)(void* dst, int value, size_t bytes);
  hipError_t (*hipEventCreate)(hipEvent_t* event);
  hipError_t (*hipEventRecord)(hipEvent_t event, hipStream_t stream);
  hipError_t (*hipEventSynchronize)(hipEvent_t event);
  hipError_t (*hipEventElapsedTime)(float* milliseconds, hipEvent_t start, hipEvent_t stop);
  hipError_t (*hipEventDestroy)(hipEvent_t event);
  const char* (*hipGetErrorName)(hipError_t error);
  const char* (*hipGetErrorString)(hipError_t error);

  // "hipMalloc: hipErrorOutOfMemory (out of memory)".
  std::string Describe(std::string_view call, hipError_t error) const;
};

// Loads libamdhip64 (.so.6, .so.5, .so, then /opt/rocm/lib) and resolves
// every function above; nullptr with `why` naming the libraries tried or the
// functions missing.
std::unique_ptr<HipRuntimeApi> OpenHipRuntimeApi(std::string* why);

// "5.2.21153" for HIP's version number 50221153
// (major * 10000000 + minor * 100000 + patch).
std::string HipVersionString(int version);

}  // namespace tiletune::runtime::hip
