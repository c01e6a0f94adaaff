#include "runtime/cuda/cubin_compiler.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "runtime/cached_compile.h"
#include "runtime/content_hash.h"
#include "runtime/cuda/ptxas_report.h"

namespace tiletune::runtime::cuda {
namespace {

namespace fs = std::filesystem;

// Reports are a few hundred bytes per CUBIN of tens of kilobytes: this
// share of the bound keeps them until long after their CUBIN is evicted.
constexpr int64_t kReportShare = 16;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CubinTarget CubinTargetFor(const kernels::KernelSource& source, const std::string& device_arch) {
  CubinTarget target{device_arch, {}};
  for (const auto& option : source.compile_options) {
    if (option != kArchSpecificOption) {
      target.options.push_back(option);
    } else if (!target.arch.ends_with('a')) {
      target.arch += 'a';
    }
  }
  return target;
}

CubinCompiler::CubinCompiler(Options options, std::string nvrtc_version)
    : options_(std::move(options)),
      nvrtc_version_(std::move(nvrtc_version)),
      cubins_(options_.cache_dir, options_.cache_max_bytes, ".cubin"),
      // A folder of their own: its work folders never meet the CUBINs' ones.
      reports_(options_.cache_dir / "ptxas-reports", options_.cache_max_bytes / kReportShare,
               ".txt") {}

std::string CubinCompiler::CacheKey(const kernels::KernelSource& source,
                                    const std::string& device_arch) const {
  const CubinTarget target = CubinTargetFor(source, device_arch);
  ContentHasher hasher;
  hasher.UpdateField("tiletune cuda kernel").UpdateField(source.code);
  for (const auto& [name, text] : source.headers) hasher.UpdateField(name).UpdateField(text);
  hasher.UpdateField("--");
  for (const auto& option : target.options) hasher.UpdateField(option);
  return hasher.UpdateField("--").UpdateField(nvrtc_version_).UpdateField(target.arch).HexDigest();
}

CompileResult CubinCompiler::Compile(const kernels::KernelSource& source,
                                     const std::string& device_arch, const CompileLimits& limits) {
  const CubinTarget target = CubinTargetFor(source, device_arch);
  const std::string key = CacheKey(source, device_arch);
  CompileCommand command;
  command.what = "nvrtc";
  command.source_file = "kernel.cu";
  command.artifact_file = "kernel.cubin";
  command.argv = [&](const fs::path& work, const fs::path& code, const fs::path& artifact) {
    std::vector<std::string> argv = {options_.rtc_binary, "nvrtc",           target.arch,
                                     code.string(),       artifact.string(), work.string()};
    argv.insert(argv.end(), target.options.begin(), target.options.end());
    return argv;
  };
  CompileResult result = CompileThroughCache(cubins_, key, source, command, limits);
  result.target = target.arch;
  result.options = source.compile_options;
  result.options.insert(result.options.end(), target.options.begin(), target.options.end());
  if (!result.ok) return result;
  if (!result.cache_hit) {
    result.resources = ParsePtxasReport(result.log, source.entry);
    KeepReport(key, result.log);
  } else if (const auto report = reports_.Find(key)) {
    result.resources = ParsePtxasReport(ReadFile(*report), source.entry);
  } else {
    spdlog::warn("CUBIN {} of {} is cached without its ptxas report: resources unknown", key,
                 source.kernel_name);
  }
  return result;
}

void CubinCompiler::KeepReport(const std::string& key, const std::string& log) {
  fs::path work;
  try {
    work = reports_.MakeWorkDir(key);
    const fs::path file = work / "report";
    std::ofstream out(file, std::ios::binary);
    if (!(out << log).flush()) throw std::runtime_error("cannot write " + file.string());
    out.close();
    reports_.Insert(key, file);
  } catch (const std::exception& e) {
    spdlog::warn("cannot keep the ptxas report of CUBIN {}: {}", key, e.what());
  }
  std::error_code ec;
  if (!work.empty()) fs::remove_all(work, ec);
}

}  // namespace tiletune::runtime::cuda
