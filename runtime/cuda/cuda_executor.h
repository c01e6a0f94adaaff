#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/device_executor.h"
#include "runtime/packed_kernel_args.h"

namespace tiletune::runtime::cuda {

// Runs CUBINs on device 0 of this process (the daemon pins each worker to
// its GPU with CUDA_VISIBLE_DEVICES) in the device's primary context, on the
// legacy default stream. Use it from the thread that opened it.
//
// An error that poisons the context (illegal address, misaligned address,
// illegal instruction, hardware stack error, launch failure...) ends the
// process: the message goes to stderr and the process exits with
// kStickyErrorExitCode, so the daemon records a crash and starts a fresh
// worker. Other driver errors are returned (Load, Launch) or thrown as
// std::runtime_error (memory), naming the failed call.
class CudaExecutor final : public DeviceExecutor {
 public:
  static constexpr int kStickyErrorExitCode = 3;

  // nullptr with `why` when libcuda is missing, cuInit fails or the device
  // cannot be set up.
  static std::unique_ptr<CudaExecutor> Open(std::string* why);
  ~CudaExecutor() override;
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  std::string_view backend() const override { return "cuda"; }
  int compute_units() const override { return compute_units_; }
  DeviceBuffer Allocate(size_t bytes) override;
  void ReleaseAll() override;
  void CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) override;
  void CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) override;
  // cuModuleLoadData on the CUBIN file's bytes, then cuModuleGetFunction.
  std::optional<std::string> Load(const std::string& artifact_path,
                                  const std::string& entry) override;
  void Unload() override;
  // cuBLASLt ("cublasLt") planned for the call's key (cublaslt_gemm_spec.h)
  // with the call's algorithm, then the epilogue pass when one came with the
  // call (it must where the chain does not fold into cuBLASLt's epilogue);
  // a gated key's two calls (b, b_up) write a buffer the pass reads.
  // The library and a 32 MiB workspace are set up on first use.
  std::optional<std::string> LoadVendor(const VendorCall& call) override;
  std::optional<v1::VendorAlgorithm> VendorAlgorithmRun() const override;
  // Launches with args.grid, args.block and args.shared_memory_bytes of
  // dynamic shared memory (opting in past 48 KiB), the kernel's one
  // parameter being the op's launch ABI struct packed from `args`; waits
  // for the end.
  std::optional<std::string> Launch(const KernelArguments& args) override;
  // Times the kernel alone with events recorded around its launch.
  std::optional<std::string> TimedLaunch(const KernelArguments& args, double* seconds) override;
  // Queues a read sweep over a zeroed buffer twice the size of the L2 cache
  // (allocated once) and returns: the next TimedLaunch starts after it.
  void FlushCaches() override;

 private:
  CudaExecutor(std::unique_ptr<CudaDriver> driver, CUdevice device, CUcontext context);
  std::optional<std::string> Prepare();
  // Binds `args` and opts the function in to their shared memory size.
  std::optional<std::string> Configure(const KernelArguments& args, PackedKernelArgs* packed);
  std::optional<std::string> Enqueue(const KernelArguments& args, PackedKernelArgs& packed);
  // Plans the loaded vendor call for `args` (the heuristic reads the bias
  // address), once per bias address.
  std::optional<std::string> PrepareVendor(const KernelArguments& args);
  std::optional<std::string> EnqueueVendor(const KernelArguments& args);
  // The message naming `call` when `result` is an error, nullopt on success;
  // ends the process when the error is sticky.
  std::optional<std::string> Status(CUresult result, const std::string& call) const;
  // Like Status, throwing the message.
  void Check(CUresult result, const std::string& call) const;

  const std::unique_ptr<CudaDriver> driver_;
  const CudaDriverApi& api_;
  const CUdevice device_;
  const CUcontext context_;
  std::vector<CUdeviceptr> buffers_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::string entry_;
  // Dynamic shared memory the loaded function accepts without opting in more.
  unsigned shared_memory_limit_ = 0;
  // The loaded vendor call: its spec and algorithm, and its plan once a
  // launch bound it.
  std::unique_ptr<CublasLtLibrary> cublaslt_;
  CUdeviceptr cublaslt_workspace_ = 0;
  std::optional<CublasLtGemmSpec> vendor_spec_;
  VendorCall vendor_call_;
  std::unique_ptr<CublasLtGemm> vendor_plan_;
  // A gated key's two products, side by side (CublasLtGemmSpec.gated),
  // which the pass reads; one of buffers_, grown when a launch needs more.
  DeviceBuffer gate_products_;
  CUevent start_ = nullptr, stop_ = nullptr;
  CUdeviceptr flush_buffer_ = 0;
  CUmodule flush_module_ = nullptr;
  CUfunction flush_function_ = nullptr;
  size_t flush_bytes_ = 0;
  int compute_units_ = 0;
};

}  // namespace tiletune::runtime::cuda
