#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/compiled_code_cache.h"

namespace tiletune::runtime::host {

// The CPU backend: kernels are C++ compiled by the system compiler into
// shared objects (-O3 -march=native), which the benchmark worker dlopens.
// One device, "cpu:0". A source asking for OpenBLAS (kLinkOpenBlasOption:
// the GEMM baseline) links the libopenblas.so.0 the compiler finds.
class HostBackend final : public Backend {
 public:
  struct Options {
    std::string compiler = "c++";  // one program, looked up in PATH
    std::filesystem::path cache_dir;
    int64_t cache_max_bytes = int64_t{1} << 30;
    bool openblas = true;  // look for OpenBLAS (the GEMM baseline)
  };

  // Checks that the compiler runs (`<compiler> --version`), asks it for
  // OpenBLAS, and opens the cache; nullptr with `why` set when the compiler
  // or the cache fails. Opened without OpenBLAS, `why` says so (the GEMM
  // baseline is then our straightforward kernel).
  static std::unique_ptr<HostBackend> Open(const Options& options, std::string* why);

  std::string_view name() const override { return "host"; }
  std::vector<DeviceInfo> Devices() const override { return {device_}; }
  // Compiles in a subprocess killed at limits.timeout_seconds; a source
  // compiled before (same code, headers, options, compiler and CPU) is a
  // cache hit that runs no compiler.
  CompileResult Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                        const CompileLimits& limits) override;
  // The compiler and the kernels share the CPU.
  bool RunsOnCompilerCores() const override { return true; }

 private:
  HostBackend(Options options, std::string compiler_version,
              std::optional<std::filesystem::path> openblas, DeviceInfo device);
  // What the compiler links after the source: OpenBLAS where the source asks
  // for it. Empty, with `why` set, when it asks and there is none.
  std::vector<std::string> LinkOptions(const kernels::KernelSource& source, std::string* why) const;
  std::string CacheKey(const kernels::KernelSource& source, const DeviceInfo& device,
                       const std::vector<std::string>& link_options) const;

  const Options options_;
  const std::string compiler_version_;
  // libopenblas.so.0 where the compiler found it, if it did.
  const std::optional<std::filesystem::path> openblas_;
  const DeviceInfo device_;
  CompiledCodeCache cache_;
};

}  // namespace tiletune::runtime::host
