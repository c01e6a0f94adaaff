#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/device_executor.h"
#include "runtime/hip/hip_runtime_api.h"

namespace tiletune::runtime::hip {

// Runs HIP kernels on the worker's GPU: device 0 of the process, which
// HIP_VISIBLE_DEVICES (DeviceInfo::worker_env) pins to one GPU. A code object
// is loaded with hipModuleLoadData and launched with hipModuleLaunchKernel,
// its one parameter the op's launch ABI struct by value; hipEvents time it.
//
// A sticky error (illegal address, kernel assert, launch failure or timeout)
// leaves the process's GPU context unusable: the executor prints the failed
// call on stderr and ends the process with _exit(3), and the tuner records
// the variant as failed and starts a new worker. (A GPU page fault usually
// never gets that far: ROCm's runtime aborts the process itself.)
//
// Compiled but never run: no AMD GPU is reachable from CI.
class HipExecutor final : public DeviceExecutor {
 public:
  // Loads libamdhip64, selects the device and creates the timing events;
  // nullptr with `why` naming the call that failed.
  static std::unique_ptr<HipExecutor> Open(std::string* why);
  ~HipExecutor() override;
  HipExecutor(const HipExecutor&) = delete;
  HipExecutor& operator=(const HipExecutor&) = delete;

  std::string_view backend() const override { return "hip"; }
  int compute_units() const override { return compute_units_; }
  DeviceBuffer Allocate(size_t bytes) override;
  void ReleaseAll() override;
  void CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) override;
  void CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) override;
  std::optional<std::string> Load(const std::string& artifact_path,
                                  const std::string& entry) override;
  void Unload() override;
  std::optional<std::string> Launch(const KernelArguments& args) override;
  // The time between events recorded around the launch on its stream.
  std::optional<std::string> TimedLaunch(const KernelArguments& args, double* seconds) override;
  // Writes a buffer twice the size of L2 with hipMemset, which evicts the
  // kernel's data from L2. MI300's Infinity Cache (MALL), which HIP does not
  // report, is larger and is not flushed.
  void FlushCaches() override;

 private:
  HipExecutor(std::unique_ptr<HipRuntimeApi> api, hipEvent_t start, hipEvent_t stop,
              size_t flush_bytes, int max_shared_memory_bytes, int compute_units);

  // nullopt on success, else the failed call's description; a sticky error
  // ends the process instead.
  std::optional<std::string> Failure(const char* call, hipError_t error) const;
  // Like Failure, but throws the description.
  void Require(const char* call, hipError_t error) const;
  // Queues one run of the loaded kernel on the null stream.
  std::optional<std::string> Enqueue(const KernelArguments& args);

  const std::unique_ptr<HipRuntimeApi> api_;
  const hipEvent_t start_, stop_;
  const size_t flush_bytes_;
  const int max_shared_memory_bytes_;
  const int compute_units_;
  void* flush_buffer_ = nullptr;
  std::vector<DeviceBuffer> buffers_;
  std::string image_;  // the loaded code object, kept while its module lives
  hipModule_t module_ = nullptr;
  hipFunction_t function_ = nullptr;
  std::string entry_;
};

}  // namespace tiletune::runtime::hip
