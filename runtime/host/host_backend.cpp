#include "host_backend.h"

#include <gnu/libc-version.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>

#include "kernels/source/host_source.h"
#include "runtime/cached_compile.h"
#include "runtime/content_hash.h"
#include "runtime/host/cpu_fingerprint.h"
#include "runtime/subprocess.h"

namespace tiletune::runtime::host {
namespace {

namespace fs = std::filesystem;

// Fixed flags of every host kernel; a KernelSource adds its own after them.
// Hidden visibility keeps a kernel's inline helpers out of the dynamic
// symbol table: only the TT_EXPORT entry is visible.
const std::vector<std::string> kCompileFlags = {
    "-O3", "-march=native", "-std=c++20", "-shared", "-fPIC", "-pthread", "-fvisibility=hidden"};

constexpr auto kVersionTimeout = std::chrono::seconds(10);

// The OpenBLAS the GEMM baseline links: its soname, which Debian's
// libopenblas0 installs (libopenblas-dev adds headers the kernels do not use).
constexpr std::string_view kOpenBlasSoname = "libopenblas.so.0";

// libopenblas.so.0 where `compiler` finds it on its library path (gcc and
// clang print the file, or the bare name when it is not there): what the
// link of the baseline will use. nullopt, with `why`, when it is not there.
std::optional<fs::path> FindOpenBlas(const std::string& compiler, std::string* why) {
  const std::string option = "-print-file-name=" + std::string(kOpenBlasSoname);
  *why = "no OpenBLAS: '" + compiler + " " + option + "' ";
  CommandResult found;
  try {
    found = RunCommand({compiler, option}, kVersionTimeout);
  } catch (const std::system_error& e) {
    *why += std::string("does not run: ") + e.what();
    return std::nullopt;
  }
  const fs::path path = found.out.substr(0, found.out.find('\n'));
  std::error_code ec;
  if (!found.timed_out && found.status.success() && path.is_absolute() && fs::exists(path, ec)) {
    return path.lexically_normal();  // gcc's is /usr/lib/gcc/x86_64-linux-gnu/12/../../../...
  }
  *why += found.timed_out ? std::string("timed out") : "finds none (Debian: libopenblas0)";
  return std::nullopt;
}

}  // namespace

std::unique_ptr<HostBackend> HostBackend::Open(const Options& options, std::string* why) {
  CommandResult version;
  try {
    version = RunCommand({options.compiler, "--version"}, kVersionTimeout);
  } catch (const std::system_error& e) {
    *why = "host compiler '" + options.compiler + "' does not run: " + e.what();
    return nullptr;
  }
  if (version.timed_out || !version.status.success()) {
    *why = "'" + options.compiler + " --version' failed (" +
           (version.timed_out ? std::string("timed out") : version.status.ToString()) +
           "): " + version.err;
    return nullptr;
  }
  const std::string compiler_version = version.out.substr(0, version.out.find('\n'));
  std::string no_openblas = "no OpenBLAS: host_openblas_baseline is false";
  const std::optional<fs::path> openblas =
      options.openblas ? FindOpenBlas(options.compiler, &no_openblas) : std::nullopt;

  DeviceInfo device;
  device.id = "cpu:0";
  device.backend = "host";
  device.fingerprint = ReadCpuFingerprint();
  device.toolchain.set_compiler_version(compiler_version);
  // OpenBLAS is what host GEMMs were measured against: records of a daemon
  // that gained, lost or changed it are stale (and re-tuned).
  std::string runtime = std::string("glibc ") + gnu_get_libc_version();
  // The file the soname resolves to names the version: libopenblasp-r0.3.21.so.
  std::string openblas_file;
  if (openblas) {
    std::error_code ec;
    const fs::path file = fs::canonical(*openblas, ec);
    openblas_file = (ec ? *openblas : file).filename().string();
    runtime += ", " + openblas_file;
  }
  device.toolchain.set_runtime_version(runtime);
  device.toolchain.set_kernel_library_version(TILETUNE_KERNEL_LIBRARY_VERSION);
  device.has_openblas = openblas.has_value();
  try {
    auto backend =
        std::unique_ptr<HostBackend>(new HostBackend(options, compiler_version, openblas, device));
    if (openblas) {
      spdlog::info("host backend: the GEMM baseline is OpenBLAS ({}: {})", openblas->string(),
                   openblas_file);
    } else {
      *why = no_openblas + ": the host GEMM baseline is " + kernels::host::kHostBaselineName;
    }
    return backend;
  } catch (const fs::filesystem_error& e) {
    *why = "compiled-code cache " + options.cache_dir.string() + ": " + e.what();
    return nullptr;
  }
}

HostBackend::HostBackend(Options options, std::string compiler_version,
                         std::optional<fs::path> openblas, DeviceInfo device)
    : options_(std::move(options)),
      compiler_version_(std::move(compiler_version)),
      openblas_(std::move(openblas)),
      device_(std::move(device)),
      cache_(options_.cache_dir, options_.cache_max_bytes) {}

std::vector<std::string> HostBackend::LinkOptions(const kernels::KernelSource& source,
                                                  std::string* why) const {
  const auto& options = source.compile_options;
  if (std::find(options.begin(), options.end(), kernels::host::kLinkOpenBlasOption) ==
      options.end()) {
    return {};
  }
  if (!openblas_) {
    *why = source.kernel_name + " links OpenBLAS, which '" + options_.compiler +
           "' does not find (Debian: libopenblas0)";
    return {};
  }
  // nodelete: OpenBLAS starts a thread pool and keeps buffers, which
  // unloading it after every run (the worker loads one kernel at a time)
  // would leak or crash on (see runtime/shared_library.h). The run path
  // finds it where the compiler did.
  return {"-Wl,-z,nodelete", "-Wl,-rpath," + openblas_->parent_path().string(),
          openblas_->string()};
}

std::string HostBackend::CacheKey(const kernels::KernelSource& source, const DeviceInfo& device,
                                  const std::vector<std::string>& link_options) const {
  ContentHasher hasher;
  hasher.UpdateField("tiletune host kernel").UpdateField(source.code);
  for (const auto& [name, text] : source.headers) hasher.UpdateField(name).UpdateField(text);
  for (const auto& flag : kCompileFlags) hasher.UpdateField(flag);
  hasher.UpdateField("--");
  for (const auto& option : source.compile_options) hasher.UpdateField(option);
  hasher.UpdateField("-- link");
  for (const auto& option : link_options) hasher.UpdateField(option);
  // -march=native means "this CPU": the model name pins it beyond the ISA.
  return hasher.UpdateField(compiler_version_)
      .UpdateField(device.fingerprint.arch())
      .UpdateField(device.fingerprint.name())
      .HexDigest();
}

CompileResult HostBackend::Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                                   const CompileLimits& limits) {
  std::string missing;
  const std::vector<std::string> link_options = LinkOptions(source, &missing);
  if (!missing.empty()) return {.log = missing};
  // The source's own options less tiletune's, then the libraries after the
  // source (a linker with --as-needed drops a library named before its user).
  std::vector<std::string> options;
  std::copy_if(source.compile_options.begin(), source.compile_options.end(),
               std::back_inserter(options),
               [](const std::string& o) { return o != kernels::host::kLinkOpenBlasOption; });
  CompileCommand command;
  command.what = "host compile";
  command.argv = [&](const fs::path& work, const fs::path& code, const fs::path& artifact) {
    std::vector<std::string> argv = {options_.compiler};
    argv.insert(argv.end(), kCompileFlags.begin(), kCompileFlags.end());
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-I", work.string(), "-o", artifact.string(), code.string()});
    argv.insert(argv.end(), link_options.begin(), link_options.end());
    return argv;
  };
  CompileResult result =
      CompileThroughCache(cache_, CacheKey(source, device, link_options), source, command, limits);
  result.target = device.fingerprint.arch();
  result.options.assign(kCompileFlags.begin(), kCompileFlags.end());
  result.options.insert(result.options.end(), options.begin(), options.end());
  result.options.insert(result.options.end(), link_options.begin(), link_options.end());
  return result;
}

}  // namespace tiletune::runtime::host
