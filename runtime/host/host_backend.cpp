#include "host_backend.h"

#include <gnu/libc-version.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>

#include "runtime/content_hash.h"
#include "runtime/host/cpu_fingerprint.h"
#include "runtime/subprocess.h"

namespace tiletune::runtime::host {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Fixed flags of every host kernel; a KernelSource adds its own after them.
// Hidden visibility keeps a kernel's inline helpers out of the dynamic
// symbol table: only the TT_EXPORT entry is visible.
const std::vector<std::string> kCompileFlags = {
    "-O3", "-march=native", "-std=c++20", "-shared", "-fPIC", "-pthread", "-fvisibility=hidden"};

constexpr auto kVersionTimeout = std::chrono::seconds(10);

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
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
  const auto start = Clock::now();
  CompileResult result;
  result.cache_key = CacheKey(source, device);
  const auto finish = [&] {
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };
  if (const auto hit = cache_.Find(result.cache_key)) {
    result.ok = true;
    result.cache_hit = true;
    result.artifact_path = hit->string();
    return finish();
  }

  fs::path work;
  try {
    work = cache_.MakeWorkDir(result.cache_key);
    const fs::path code = work / "kernel.cpp", artifact = work / "kernel.so";
    WriteFile(code, source.code);
    for (const auto& [name, text] : source.headers) WriteFile(work / name, text);

    std::vector<std::string> argv = {options_.compiler};
    argv.insert(argv.end(), kCompileFlags.begin(), kCompileFlags.end());
    argv.insert(argv.end(), source.compile_options.begin(), source.compile_options.end());
    argv.insert(argv.end(), {"-I", work.string(), "-o", artifact.string(), code.string()});
    const auto timeout =
        std::chrono::milliseconds(static_cast<int64_t>(limits.timeout_seconds * 1000));
    const CommandResult run = RunCommand(argv, timeout);
    result.log = run.out + run.err;
    if (run.timed_out) {
      result.timed_out = true;
      result.log += "\ncompiler killed after " + std::to_string(limits.timeout_seconds) +
                    " s (compile timeout)";
      spdlog::warn("host compile of {} timed out after {} s", source.kernel_name,
                   limits.timeout_seconds);
    } else if (!run.status.success()) {
      result.log += "\ncompiler failed: " + run.status.ToString();
      spdlog::debug("host compile of {} failed: {}", source.kernel_name, result.log);
    } else {
      result.artifact_path = cache_.Insert(result.cache_key, artifact).string();
      result.ok = true;
    }
  } catch (const std::exception& e) {
    result.ok = false;
    result.log += std::string("\nhost compile failed: ") + e.what();
  }
  std::error_code ec;
  if (!work.empty()) fs::remove_all(work, ec);
  return finish();
}

}  // namespace tiletune::runtime::host
