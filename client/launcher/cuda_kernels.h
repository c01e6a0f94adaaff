#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "client/launcher/kernel_handle.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/cuda/tensor_map.h"
#include "tiletune/v1/artifacts.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::launcher {

// libcuda as the launcher uses it: the kernels it loaded and the cuBLASLt
// workspaces it made in each context the caller launched in. One per
// process, never freed (like the driver itself): modules and workspaces
// live as long as their contexts. Thread-safe.
class CudaContexts {
 public:
  // nullptr with `why` when libcuda cannot be opened or initialized.
  static std::shared_ptr<CudaContexts> Process(std::string* why);

  const runtime::cuda::CudaDriver& driver() const { return *driver_; }
  // The calling thread's current context; null when it has none.
  runtime::cuda::CUcontext Current() const;

  struct LoadedKernel {
    runtime::cuda::CUfunction function = nullptr;
    int compute_units = 0;  // SMs of the context's device
  };
  // The artifact's entry in `context` (the current one): `code` loaded once
  // per (context, content hash), dynamic shared memory raised to what the
  // launch needs; or why it cannot be (remembered, not retried).
  std::variant<LoadedKernel, std::string> KernelIn(runtime::cuda::CUcontext context,
                                                   const v1::KernelArtifact& artifact,
                                                   const std::string& code);
  // A cuBLASLt workspace in `context` for `stream`: one per stream, since
  // launches on different streams may overlap.
  std::variant<void*, std::string> WorkspaceIn(runtime::cuda::CUcontext context,
                                               runtime::cuda::CUstream stream);
  // cuBLASLt, opened on first use; nullptr with `why`.
  const runtime::cuda::CublasLtLibrary* CublasLt(std::string* why);

 private:
  explicit CudaContexts(std::unique_ptr<runtime::cuda::CudaDriver> driver)
      : driver_(std::move(driver)) {}

  struct Context {
    std::map<std::string, std::variant<LoadedKernel, std::string>> kernels;  // by content hash
    std::map<runtime::cuda::CUstream, runtime::cuda::CUdeviceptr> workspaces;
  };

  const std::unique_ptr<runtime::cuda::CudaDriver> driver_;
  std::mutex mutex_;
  std::map<runtime::cuda::CUcontext, Context> contexts_;
  std::unique_ptr<runtime::cuda::CublasLtLibrary> cublaslt_;
  std::string cublaslt_missing_;
};

// Why the artifact's launch geometry cannot be launched; nullopt when it can.
std::optional<std::string> UnlaunchableGeometry(const v1::LaunchGeometry& launch);

// The cuBLASLt algorithm the fallback runs for a key whose daemon record is
// `record`: the baseline's (Record.baseline_algorithm) when the library
// computed the whole key, else the fastest correct candidate that did (this
// launcher has no epilogue pass); nullopt when the record has none (cuBLASLt's
// heuristic then picks).
std::optional<v1::VendorAlgorithm> FallbackAlgorithmOf(const v1::Record& record);

// A GEMM key run by cuBLASLt as the worker's baseline runs it
// (runtime/cuda/cublaslt_gemm*): the key's chain folded into the library's
// epilogue. Its plans (one per context and algorithm, made again when the
// bias moves) are shared by the key's handles.
class CublasLtGemmCall {
 public:
  // The call for `key`, or why cuBLASLt cannot run it here.
  static std::variant<std::shared_ptr<const CublasLtGemmCall>, std::string> For(
      std::shared_ptr<CudaContexts> cuda, const v1::KernelKey& key);

  // Checks `args` as a kernel of the key takes them (LaunchError), then
  // queues the call with `algorithm` (the heuristic's first when nullopt,
  // or when this cuBLASLt does not accept it): kVendorFallback with
  // `reason` and the algorithm that ran, or kNotHandled when cuBLASLt cannot
  // take these operands.
  LaunchOutcome Run(void* stream, const LaunchArgs& args, const std::string& reason,
                    const std::optional<v1::VendorAlgorithm>& algorithm) const;

 private:
  CublasLtGemmCall(std::shared_ptr<CudaContexts> cuda,
                   const runtime::cuda::CublasLtLibrary& library,
                   runtime::cuda::CublasLtGemmSpec spec, v1::KernelAbi abi)
      : cuda_(std::move(cuda)), library_(library), spec_(spec), abi_(std::move(abi)) {}

  const std::shared_ptr<CudaContexts> cuda_;
  const runtime::cuda::CublasLtLibrary& library_;
  const runtime::cuda::CublasLtGemmSpec spec_;
  const v1::KernelAbi abi_;  // the key's, for the argument checks
  mutable std::mutex mutex_;
  // By context and algorithm (its bytes; empty: the heuristic's first).
  mutable std::map<std::pair<runtime::cuda::CUcontext, std::string>,
                   std::unique_ptr<runtime::cuda::CublasLtGemm>>
      plans_;
};

// The vendor fallback as a handle, running `algorithm` (FallbackAlgorithmOf).
class CublasLtHandle final : public KernelHandle {
 public:
  CublasLtHandle(std::shared_ptr<const CublasLtGemmCall> call,
                 std::optional<v1::VendorAlgorithm> algorithm, std::string reason)
      : KernelHandle(Runner::kVendorFallback, std::move(reason)),
        call_(std::move(call)),
        algorithm_(std::move(algorithm)) {}
  LaunchOutcome Launch(void* stream, const LaunchArgs& args) const override {
    return call_->Run(stream, args, reason(), algorithm_);
  }

 private:
  const std::shared_ptr<const CublasLtGemmCall> call_;
  const std::optional<v1::VendorAlgorithm> algorithm_;
};

// A served CUBIN, verified, loaded into each context it is launched in.
class TunedCudaKernel final : public KernelHandle {
 public:
  // `fallback`: what runs where the kernel does not load (may be null),
  // with `fallback_algorithm`. `tensor_maps`: the artifact's maps planned
  // for its ABI (runtime::cuda::PlanTensorMaps), encoded at each launch.
  TunedCudaKernel(std::shared_ptr<CudaContexts> cuda, v1::KernelArtifact artifact, std::string code,
                  std::string reason, std::shared_ptr<const CublasLtGemmCall> fallback,
                  std::vector<runtime::cuda::PlannedTensorMap> tensor_maps,
                  std::optional<v1::VendorAlgorithm> fallback_algorithm);

  // Loads it into the calling thread's current context, if there is one;
  // why it does not load.
  std::optional<std::string> LoadIntoCurrentContext() const;
  LaunchOutcome Launch(void* stream, const LaunchArgs& args) const override;
  const std::optional<v1::VendorAlgorithm>& fallback_algorithm() const {
    return fallback_algorithm_;
  }

 private:
  const std::shared_ptr<CudaContexts> cuda_;
  const v1::KernelArtifact artifact_;
  const std::string code_;
  const std::shared_ptr<const CublasLtGemmCall> fallback_;
  const std::vector<runtime::cuda::PlannedTensorMap> tensor_maps_;
  const std::optional<v1::VendorAlgorithm> fallback_algorithm_;
};

}  // namespace tiletune::launcher
