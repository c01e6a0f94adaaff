#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "runtime/backend.h"
#include "runtime/compiled_code_cache.h"

namespace tiletune::runtime::cuda {

// A KernelSource asks for the arch-specific target of its device (sm_90 →
// sm_90a) by listing kernels::kArchSpecificOption among its compile_options;
// the compiler never sees it.
using kernels::kArchSpecificOption;

// What NVRTC is asked to build for one source on one device.
struct CubinTarget {
  std::string arch;                  // sm_90, or sm_90a when asked for
  std::vector<std::string> options;  // the source's options, kArchSpecificOption removed
};
CubinTarget CubinTargetFor(const kernels::KernelSource& source, const std::string& device_arch);

// The CUDA backend's compile path, which needs NVRTC's version but no GPU:
// sources become CUBINs through `tiletune-rtc nvrtc` in a killable
// subprocess, cached by content. ptxas's resource report of each CUBIN is
// kept too (in <cache_dir>/ptxas-reports), so that a cache hit reports the
// resources the compile did.
class CubinCompiler {
 public:
  struct Options {
    std::filesystem::path cache_dir;
    int64_t cache_max_bytes = int64_t{1} << 30;
    std::string rtc_binary = "tiletune-rtc";  // a path, or a name looked up in PATH
  };

  // Throws std::filesystem::filesystem_error when the cache folder is unusable.
  CubinCompiler(Options options, std::string nvrtc_version);

  // SHA-256 over the code, headers, options, NVRTC version and target arch.
  std::string CacheKey(const kernels::KernelSource& source, const std::string& device_arch) const;

  // Thread-safe.
  CompileResult Compile(const kernels::KernelSource& source, const std::string& device_arch,
                        const CompileLimits& limits);

  const std::string& nvrtc_version() const { return nvrtc_version_; }

 private:
  void KeepReport(const std::string& key, const std::string& log);

  const Options options_;
  const std::string nvrtc_version_;
  CompiledCodeCache cubins_;
  CompiledCodeCache reports_;  // the NVRTC log of each cached CUBIN
};

}  // namespace tiletune::runtime::cuda
