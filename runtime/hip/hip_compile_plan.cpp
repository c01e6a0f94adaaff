#include "runtime/hip/hip_compile_plan.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "runtime/content_hash.h"
#include "runtime/hip/clang_hip_compiler.h"

namespace tiletune::runtime::hip {

std::optional<int> DefaultWavefrontSize(std::string_view arch) {
  // gfx<major><minor><stepping>: the last two characters are minor and
  // stepping (hex digits: gfx90a), the rest is the major version.
  if (!arch.starts_with("gfx") || arch.size() < 6) return std::nullopt;
  const std::string_view major_digits = arch.substr(3, arch.size() - 5);
  int major = 0;
  const auto [end, error] =
      std::from_chars(major_digits.data(), major_digits.data() + major_digits.size(), major);
  if (error != std::errc() || end != major_digits.data() + major_digits.size()) {
    return std::nullopt;
  }
  return major >= 10 ? 32 : 64;
}

std::string_view HipDeviceCompilerFor(std::string_view arch) {
  const auto& clang_archs = ClangHipCompiler::Archs();
  return std::find(clang_archs.begin(), clang_archs.end(), arch) != clang_archs.end() ? "clang"
                                                                                      : "hiprtc";
}

std::optional<std::string> UnsupportedHipArch(std::string_view arch) {
  if (DefaultWavefrontSize(arch) != 32) return std::nullopt;
  return std::string(arch) +
         " (RDNA, wave32) is not supported: tiletune's HIP kernels are written for wave64 "
         "CDNA targets (gfx90a, gfx942, gfx950)";
}

HipCompilePlan PlanHipCompile(const kernels::KernelSource& source, const std::string& arch,
                              const std::string& compiler_version, const std::string& rtc_binary) {
  const auto wavefront = DefaultWavefrontSize(arch);
  if (!wavefront) {
    throw std::invalid_argument("'" + arch + "' is not an AMD GPU target (gfx...)");
  }
  std::vector<std::string> options = source.compile_options;
  options.push_back("-DTT_WAVEFRONT_SIZE=" + std::to_string(*wavefront));

  ContentHasher hasher;
  hasher.UpdateField("tiletune hip kernel").UpdateField(source.code);
  for (const auto& [name, text] : source.headers) hasher.UpdateField(name).UpdateField(text);
  hasher.UpdateField("--");
  for (const auto& option : options) hasher.UpdateField(option);
  HipCompilePlan plan;
  plan.cache_key = hasher.UpdateField(compiler_version).UpdateField(arch).HexDigest();

  const std::string compiler(HipDeviceCompilerFor(arch));
  plan.command.what = compiler;
  plan.command.source_file = "kernel.hip";
  plan.command.artifact_file = "kernel.hsaco";
  plan.command.argv = [rtc_binary, compiler, arch, options](const std::filesystem::path& work,
                                                            const std::filesystem::path& code,
                                                            const std::filesystem::path& artifact) {
    std::vector<std::string> argv = {rtc_binary,    compiler,          arch,
                                     code.string(), artifact.string(), work.string()};
    argv.insert(argv.end(), options.begin(), options.end());
    return argv;
  };
  return plan;
}

}  // namespace tiletune::runtime::hip
