#include "host_backend.h"

#include <gnu/libc-version.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>

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

  DeviceInfo device;
  device.id = "cpu:0";
  device.backend = "host";
  device.fingerprint = ReadCpuFingerprint();
  device.toolchain.set_compiler_version(compiler_version);
  device.toolchain.set_runtime_version(std::string("glibc ") + gnu_get_libc_version());
  device.toolchain.set_kernel_library_version(TILETUNE_KERNEL_LIBRARY_VERSION);
  try {
    return std::unique_ptr<HostBackend>(new HostBackend(options, compiler_version, device));
  } catch (const fs::filesystem_error& e) {
    *why = "compiled-code cache " + options.cache_dir.string() + ": " + e.what();
    return nullptr;
  }
}

HostBackend::HostBackend(Options options, std::string compiler_version, DeviceInfo device)
    : options_(std::move(options)),
      compiler_version_(std::move(compiler_version)),
      device_(std::move(device)),
      cache_(options_.cache_dir, options_.cache_max_bytes) {}

std::string HostBackend::CacheKey(const kernels::KernelSource& source,
                                  const DeviceInfo& device) const {
  ContentHasher hasher;
  hasher.UpdateField("tiletune host kernel").UpdateField(source.code);
  for (const auto& [name, text] : source.headers) hasher.UpdateField(name).UpdateField(text);
  for (const auto& flag : kCompileFlags) hasher.UpdateField(flag);
  hasher.UpdateField("--");
  for (const auto& option : source.compile_options) hasher.UpdateField(option);
  // -march=native means "this CPU": the model name pins it beyond the ISA.
  return hasher.UpdateField(compiler_version_)
      .UpdateField(device.fingerprint.arch())
      .UpdateField(device.fingerprint.name())
      .HexDigest();
}

CompileResult HostBackend::Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                                   const CompileLimits& limits) {
  CompileCommand command;
  command.what = "host compile";
  command.argv = [&](const fs::path& work, const fs::path& code, const fs::path& artifact) {
    std::vector<std::string> argv = {options_.compiler};
    argv.insert(argv.end(), kCompileFlags.begin(), kCompileFlags.end());
    argv.insert(argv.end(), source.compile_options.begin(), source.compile_options.end());
    argv.insert(argv.end(), {"-I", work.string(), "-o", artifact.string(), code.string()});
    return argv;
  };
  CompileResult result =
      CompileThroughCache(cache_, CacheKey(source, device), source, command, limits);
  result.target = device.fingerprint.arch();
  result.options.assign(kCompileFlags.begin(), kCompileFlags.end());
  result.options.insert(result.options.end(), source.compile_options.begin(),
                        source.compile_options.end());
  return result;
}

}  // namespace tiletune::runtime::host
