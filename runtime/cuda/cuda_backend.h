#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/cuda/cubin_compiler.h"

namespace tiletune::runtime::cuda {

// The NVIDIA backend: one device per GPU the driver reports ("cuda:N"),
// kernels compiled by NVRTC (in tiletune-rtc) into CUBINs that the
// benchmark worker loads with the driver API (CudaExecutor). A source asks
// for the arch-specific target (sm_90a) with kArchSpecificOption.
class CudaBackend final : public Backend {
 public:
  using Options = CubinCompiler::Options;

  // Opens libcuda and NVRTC and lists the devices; nullptr with `why` when
  // either library is missing (the loader's message), cuInit fails (its
  // error name, e.g. CUDA_ERROR_NO_DEVICE), there is no device, the
  // tiletune-rtc path is not executable or the cache folder is unusable.
  static std::unique_ptr<CudaBackend> Open(const Options& options, std::string* why);

  std::string_view name() const override { return "cuda"; }
  std::vector<DeviceInfo> Devices() const override { return devices_; }
  CompileResult Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                        const CompileLimits& limits) override;
  // cuBLASLt (the GEMM baseline), when libcublasLt opened at Open.
  std::optional<std::string> VendorLibraryMissing(std::string_view library) const override;

 private:
  CudaBackend(std::vector<DeviceInfo> devices, std::unique_ptr<CubinCompiler> compiler,
              std::optional<std::string> cublaslt_missing);

  const std::vector<DeviceInfo> devices_;
  const std::unique_ptr<CubinCompiler> compiler_;
  const std::optional<std::string> cublaslt_missing_;  // why libcublasLt did not open
};

// "cuda driver 13.0" for cuDriverGetVersion's 13000.
std::string CudaDriverVersionName(int version);

// The CUDA_VISIBLE_DEVICES value that makes device `ordinal` of this process
// a worker's only device: its entry in this process's own
// CUDA_VISIBLE_DEVICES when that is set (ordinals count within that list),
// else the ordinal itself.
std::string WorkerVisibleDevice(int ordinal);

}  // namespace tiletune::runtime::cuda
