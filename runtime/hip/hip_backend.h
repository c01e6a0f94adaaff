#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "runtime/backend.h"
#include "runtime/compiled_code_cache.h"

namespace tiletune::runtime::hip {

// The AMD GPU backend: kernels are HIP compiled by hipRTC, or by clang for
// gfx942/gfx950 (HipDeviceCompilerFor), in tiletune-rtc, a subprocess killed
// past the compile limit, into code objects that the
// benchmark worker loads with hipModuleLoadData. One device per GPU, "hip:N".
//
// Device code learns the wave size from -DTT_WAVEFRONT_SIZE (64 on CDNA,
// 32 on RDNA; see PlanHipCompile), which follows from the fingerprint's arch
// alone (DefaultWavefrontSize); discovery refuses a GPU whose reported wave
// size disagrees.
//
// Untested on hardware: no AMD GPU is reachable from CI. Discovery without a
// GPU and every compile path are tested; the device queries are not.
class HipBackend final : public Backend {
 public:
  struct Options {
    std::string rtc_binary = "tiletune-rtc";  // a path, or a name looked up in PATH
    std::filesystem::path cache_dir;
    int64_t cache_max_bytes = int64_t{1} << 30;
  };

  // Loads libamdhip64 and hipRTC, and describes every GPU; nullptr with
  // `why` when a library is missing or no AMD GPU is found, e.g.
  // "libamdhip64.so.5 opened, no AMD GPU found (hipGetDeviceCount:
  // hipErrorNoDevice)".
  static std::unique_ptr<HipBackend> Open(const Options& options, std::string* why);

  std::string_view name() const override { return "hip"; }
  std::vector<DeviceInfo> Devices() const override { return devices_; }
  // Compiles for the device's arch; a source compiled before for the same
  // arch, options and compiler build is a cache hit. A successful result
  // carries the code object's resource report.
  CompileResult Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                        const CompileLimits& limits) override;

 private:
  HipBackend(Options options, std::string hiprtc_version, std::string clang_version,
             std::string no_clang, std::vector<DeviceInfo> devices);

  const Options options_;
  const std::string hiprtc_version_;
  const std::string clang_version_;  // empty without clang, then no_clang_ says why
  const std::string no_clang_;
  const std::vector<DeviceInfo> devices_;
  CompiledCodeCache cache_;
};

// HIP_VISIBLE_DEVICES for the worker of device `ordinal` as this process
// numbers it: the ordinal itself, or, when this process was started with
// HIP_VISIBLE_DEVICES=`inherited`, the entry of that list it stands for.
std::string WorkerVisibleDevice(int ordinal, const char* inherited);

}  // namespace tiletune::runtime::hip
