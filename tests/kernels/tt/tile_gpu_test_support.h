#pragma once

// What the tile library's GPU tests share: host-side 16-bit floats, random
// inputs, and a CUDA device to compile (NVRTC) and run (CudaExecutor) on.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "runtime/device_executor.h"
#include "runtime/rtc/rtc_compiler.h"

namespace tiletune::kernels::testing {

// Round to nearest even, as the device's conversions do.
uint16_t ToBf16(float value);
float FromBf16(uint16_t bits);
uint16_t ToF16(float value);
float FromF16(uint16_t bits);

// Elements stored as `dtype` (bf16, f16 or f32) for the device, and the
// values those bytes hold, for references.
struct HostTensor {
  v1::DType dtype = v1::DTYPE_F32;
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};
// `count` values drawn from `seed`, uniform in [-1, 1].
HostTensor RandomTensor(size_t count, v1::DType dtype, uint64_t seed);
// The values of `bytes` read as `dtype`.
std::vector<double> Decode(const std::vector<unsigned char>& bytes, v1::DType dtype);
size_t DTypeBytes(v1::DType dtype);

// The CUDA device of this process with NVRTC, for sm_90 (the H200 these
// tests are written for). nullopt with `why` on a machine without them.
struct CudaRig {
  std::unique_ptr<runtime::DeviceExecutor> executor;
  std::unique_ptr<runtime::RtcCompiler> nvrtc;
  std::filesystem::path scratch;  // compiled CUBINs
};
std::optional<CudaRig> OpenCudaRig(std::string* why);

// The CUBIN of `source` for sm_90, or for sm_90a when the source asks for
// the arch-specific target (kArchSpecificOption), as the CUDA backend
// builds it; nullopt with the compiler's log in `log`.
std::optional<std::string> CompileForSm90(runtime::RtcCompiler& nvrtc, const KernelSource& source,
                                          std::string* log);

// Writes `cubin` to the rig's scratch folder and loads `entry` from it; the
// reason on failure.
std::optional<std::string> LoadCubin(CudaRig& rig, const std::string& cubin,
                                     const std::string& entry);

// Copies a host tensor to a new device buffer.
runtime::DeviceBuffer Upload(runtime::DeviceExecutor& executor, const HostTensor& tensor);

}  // namespace tiletune::kernels::testing
