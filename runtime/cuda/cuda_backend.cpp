#include "runtime/cuda/cuda_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/cuda/cuda_fingerprint.h"
#include "runtime/cuda/nvrtc_compiler.h"

namespace tiletune::runtime::cuda {

using kernels::gemm::kCublasLtName;

std::string CudaDriverVersionName(int version) {
  return "cuda driver " + std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

std::string WorkerVisibleDevice(int ordinal) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible) return std::to_string(ordinal);
  const std::string list = visible;
  size_t begin = 0;
  for (int i = 0; begin <= list.size(); ++i) {
    const size_t end = std::min(list.find(',', begin), list.size());
    if (i == ordinal) return list.substr(begin, end - begin);
    begin = end + 1;
  }
  return std::to_string(ordinal);
}

std::unique_ptr<CudaBackend> CudaBackend::Open(const Options& options, std::string* why) {
  const auto driver = CudaDriver::Open(why);
  if (!driver) return nullptr;
  const CudaDriverApi& api = driver->api();
  if (const CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    *why = driver->Describe(r, "cuInit");
    return nullptr;
  }
  int driver_version = 0, count = 0;
  if (const CUresult r = api.cuDriverGetVersion(&driver_version); r != CUDA_SUCCESS) {
    *why = driver->Describe(r, "cuDriverGetVersion");
    return nullptr;
  }
  if (const CUresult r = api.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    *why = driver->Describe(r, "cuDeviceGetCount");
    return nullptr;
  }
  if (count == 0) {
    *why = "the CUDA driver reports no device";
    return nullptr;
  }

  std::string nvrtc_why;
  const auto nvrtc = NvrtcCompiler::Open(&nvrtc_why);
  if (!nvrtc) {
    *why = nvrtc_why;
    return nullptr;
  }
  if (options.rtc_binary.find('/') != std::string::npos &&
      ::access(options.rtc_binary.c_str(), X_OK) != 0) {
    *why = "device compiler program " + options.rtc_binary + " is missing or not executable";
    return nullptr;
  }

  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    if (const CUresult r = api.cuDeviceGet(&device, ordinal); r != CUDA_SUCCESS) {
      *why = driver->Describe(r, "cuDeviceGet(" + std::to_string(ordinal) + ")");
      return nullptr;
    }
    auto fingerprint = ReadCudaFingerprint(*driver, device, why);
    if (!fingerprint) return nullptr;
    DeviceInfo info;
    info.id = "cuda:" + std::to_string(ordinal);
    info.backend = "cuda";
    info.fingerprint = std::move(*fingerprint);
    info.toolchain.set_driver_version(CudaDriverVersionName(driver_version));
    // NVRTC is both the compiler and the only CUDA runtime piece in play.
    info.toolchain.set_runtime_version(nvrtc->version());
    info.toolchain.set_compiler_version(nvrtc->version());
    info.toolchain.set_kernel_library_version(TILETUNE_KERNEL_LIBRARY_VERSION);
    info.worker_env["CUDA_VISIBLE_DEVICES"] = WorkerVisibleDevice(ordinal);
    devices.push_back(std::move(info));
  }

  // The GEMM baseline; its absence leaves every other kernel tunable.
  std::optional<std::string> cublaslt_missing;
  std::string cublaslt_why;
  if (!CublasLtLibrary::Open(&cublaslt_why)) cublaslt_missing = cublaslt_why;

  try {
    auto compiler = std::make_unique<CubinCompiler>(options, nvrtc->version());
    return std::unique_ptr<CudaBackend>(
        new CudaBackend(std::move(devices), std::move(compiler), std::move(cublaslt_missing)));
  } catch (const std::filesystem::filesystem_error& e) {
    *why = "compiled-code cache " + options.cache_dir.string() + ": " + e.what();
    return nullptr;
  }
}

CudaBackend::CudaBackend(std::vector<DeviceInfo> devices, std::unique_ptr<CubinCompiler> compiler,
                         std::optional<std::string> cublaslt_missing)
    : devices_(std::move(devices)),
      compiler_(std::move(compiler)),
      cublaslt_missing_(std::move(cublaslt_missing)) {}

std::optional<std::string> CudaBackend::VendorLibraryMissing(std::string_view library) const {
  if (library != kCublasLtName) {
    return "backend cuda calls only " + std::string(kCublasLtName) + ", not " +
           std::string(library);
  }
  return cublaslt_missing_;
}

CompileResult CudaBackend::Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                                   const CompileLimits& limits) {
  return compiler_->Compile(source, device.fingerprint.arch(), limits);
}

}  // namespace tiletune::runtime::cuda
