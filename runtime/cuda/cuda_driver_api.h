#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tiletune::runtime::cuda {

// The few types and values of the CUDA driver API that tiletune uses,
// mirroring cuda.h of CUDA 12/13 (64-bit): the build needs no CUDA toolkit.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_ECC_UNCORRECTABLE = 214;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

// CUdevice_attribute values.
inline constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;  // kHz
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute value.
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr unsigned CU_EVENT_DEFAULT = 0;

// cuTensorMapEncodeTiled's enums (CUtensorMapDataType, CUtensorMapInterleave,
// CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill): the
// values tiletune encodes with.
inline constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
inline constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
inline constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
inline constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
inline constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
inline constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
inline constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
inline constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
inline constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3;
inline constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;

// CUtensorMap: opaque, written by the driver at a 64-byte aligned address.
struct CUtensorMap {
  alignas(64) uint64_t opaque[16];
};

// Entry points of libcuda, resolved by the names cuda.h maps the API to
// (cuMemAlloc is cuMemAlloc_v2...), with the legacy default stream.
struct CudaDriverApi {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxGetCurrent)(CUcontext* context);
  CUresult (*cuCtxGetDevice)(CUdevice* device);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_memory_bytes, CUstream stream, void** params,
                             void** extra);
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
  CUresult (*cuEventDestroy)(CUevent event);
  // CUDA 12.0+.
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap* map, int data_type, uint32_t rank, void* address,
                                     const uint64_t* dims, const uint64_t* strides,
                                     const uint32_t* box, const uint32_t* element_strides,
                                     int interleave, int swizzle, int l2_promotion, int oob_fill);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
};

// libcuda opened with dlopen. The library stays loaded for the life of the
// process (never dlclosed): the driver's own threads and atexit handlers
// outlive any one user of it.
class CudaDriver {
 public:
  // libcuda.so.1, then libcuda.so; nullptr with `why` (the loader's
  // message, or the entry point that is missing) when neither is usable.
  static std::unique_ptr<CudaDriver> Open(std::string* why);

  const CudaDriverApi& api() const { return api_; }

  // "CUDA_ERROR_NO_DEVICE", or "CUresult 123" for a code the driver cannot name.
  std::string ErrorName(CUresult result) const;
  // "<call> failed: CUDA_ERROR_X (description)".
  std::string Describe(CUresult result, const std::string& call) const;

  // Whether `result` leaves the context unusable: every later call in this
  // process fails, so only a new process can use the device again.
  static bool IsSticky(CUresult result);

 private:
  explicit CudaDriver(const CudaDriverApi& api) : api_(api) {}
  const CudaDriverApi api_;
};

}  // namespace tiletune::runtime::cuda
