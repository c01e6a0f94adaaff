#pragma once

#include <vector>

#include "kernels/tt/host/abi.h"
#include "runtime/device_executor.h"
#include "runtime/packed_kernel_args.h"

namespace tiletune::runtime::host {

// Runs host kernels in this process: buffers are 64-byte aligned heap
// memory, an artifact is a shared object opened with dlopen, and a launch is
// a direct call of its tt_host_entry with the packed launch ABI struct.
class HostExecutor final : public DeviceExecutor {
 public:
  HostExecutor() = default;
  ~HostExecutor() override;
  HostExecutor(const HostExecutor&) = delete;
  HostExecutor& operator=(const HostExecutor&) = delete;

  std::string_view backend() const override { return "host"; }
  int compute_units() const override;
  DeviceBuffer Allocate(size_t bytes) override;
  void ReleaseAll() override;
  void CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) override;
  void CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) override;
  std::optional<std::string> Load(const std::string& artifact_path,
                                  const std::string& entry) override;
  void Unload() override;
  std::optional<std::string> Launch(const KernelArguments& args) override;
  std::optional<std::string> TimedLaunch(const KernelArguments& args, double* seconds) override;
  // Flushes every line of every allocated buffer out of all cache levels
  // (clflush / dc civac). Sweeping a buffer larger than the last-level cache
  // would cost that size per repetition, and virtual machines report the
  // whole host's L3 (hundreds of MiB) as theirs.
  void FlushCaches() override;

 private:
  // PackKernelArgs, refusing tensor maps first.
  std::optional<std::string> Pack(const KernelArguments& args, PackedKernelArgs* packed) const;
  std::optional<std::string> Call(const PackedKernelArgs& packed) const;

  std::vector<DeviceBuffer> buffers_;
  void* library_ = nullptr;
  tt_host_entry entry_ = nullptr;
  std::string entry_name_;
};

}  // namespace tiletune::runtime::host
