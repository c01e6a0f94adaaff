#include "runtime/cached_compile.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>

#include "runtime/subprocess.h"

namespace tiletune::runtime {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Headers may sit in folders ("tt/arch/sm90a_wgmma.h").
void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

CompileResult CompileThroughCache(CompiledCodeCache& cache, const std::string& cache_key,
                                  const kernels::KernelSource& source,
                                  const CompileCommand& command, const CompileLimits& limits) {
  const auto start = Clock::now();
  CompileResult result;
  result.cache_key = cache_key;
  const auto finish = [&] {
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };
  if (const auto hit = cache.Find(cache_key)) {
    result.ok = true;
    result.cache_hit = true;
    result.artifact_path = hit->string();
    return finish();
  }

  fs::path work;
  try {
    work = cache.MakeWorkDir(cache_key);
    const fs::path code = work / command.source_file, artifact = work / command.artifact_file;
    WriteFile(code, source.code);
    for (const auto& [name, text] : source.headers) WriteFile(work / name, text);

    const auto timeout =
        std::chrono::milliseconds(static_cast<int64_t>(limits.timeout_seconds * 1000));
    const CommandResult run =
        RunCommand(command.argv(work, code, artifact), timeout, {}, limits.priority);
    result.log = run.out + run.err;
    if (run.timed_out) {
      result.timed_out = true;
      result.log += "\ncompiler killed after " + std::to_string(limits.timeout_seconds) +
                    " s (compile timeout)";
      spdlog::warn("{} of {} timed out after {} s", command.what, source.kernel_name,
                   limits.timeout_seconds);
    } else if (!run.status.success()) {
      result.log += "\n" + command.what + " failed: " + run.status.ToString();
      spdlog::debug("{} of {} failed: {}", command.what, source.kernel_name, result.log);
    } else {
      result.artifact_path = cache.Insert(cache_key, artifact).string();
      result.ok = true;
    }
  } catch (const std::exception& e) {
    result.ok = false;
    result.log += "\n" + command.what + " failed: " + e.what();
  }
  std::error_code ec;
  if (!work.empty()) fs::remove_all(work, ec);
  return finish();
}

}  // namespace tiletune::runtime
