#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "runtime/backend.h"
#include "runtime/compiled_code_cache.h"

namespace tiletune::runtime {

// How one backend turns a source file into an artifact with an external
// program (the system compiler, tiletune-rtc): the files it reads and writes
// in the work folder, and its command line.
struct CompileCommand {
  std::string what;  // for logs: "host compile", "nvrtc"
  std::string source_file = "kernel.cpp";
  std::string artifact_file = "kernel.so";
  // argv given the work folder (headers are written there) and the paths of
  // the source and artifact inside it.
  std::function<std::vector<std::string>(const std::filesystem::path& work,
                                         const std::filesystem::path& source,
                                         const std::filesystem::path& artifact)>
      argv;
};

// The compile path every backend shares: answer from the compiled-code cache
// when `cache_key` is there; else write the source and its headers into a
// fresh work folder, run the command in its own process group under
// `limits` (killed past the timeout), and move the artifact into the cache.
CompileResult CompileThroughCache(CompiledCodeCache& cache, const std::string& cache_key,
                                  const kernels::KernelSource& source,
                                  const CompileCommand& command, const CompileLimits& limits);

}  // namespace tiletune::runtime
