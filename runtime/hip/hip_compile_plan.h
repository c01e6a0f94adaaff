#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/core/kernel_template.h"
#include "runtime/cached_compile.h"

namespace tiletune::runtime::hip {

// The wavefront size hipRTC compiles for on `arch` by default: 64 on GCN and
// CDNA (gfx6 to gfx9: gfx90a, gfx942), 32 on RDNA (gfx10 and later); nullopt
// when `arch` is not a gfx target name.
std::optional<int> DefaultWavefrontSize(std::string_view arch);

// The tiletune-rtc compiler that serves `arch`: "clang" for gfx942 and
// gfx950 (ROCm 5.2's hipRTC aborts on them, see ClangHipCompiler), "hiprtc"
// for every other target.
std::string_view HipDeviceCompilerFor(std::string_view arch);

// Why tiletune's HIP kernels cannot serve `arch`, or nullopt: they are
// wave64 (CDNA and GCN); RDNA (gfx10+, wave32, WMMA: gfx1100) is not
// supported, and ROCm 5.2's hipRTC would abort on gfx11 anyway.
std::optional<std::string> UnsupportedHipArch(std::string_view arch);

// How the HIP backend compiles one source for one target, worked out without
// a device: the cache key and the tiletune-rtc command.
struct HipCompilePlan {
  std::string cache_key;
  CompileCommand command;
};

// Options are the source's own followed by -DTT_WAVEFRONT_SIZE=<64|32>: the
// one place device code (and its launch geometry) learns the wave size, the
// same way on every target. The key is a SHA-256 over code, headers, those
// options, `compiler_version` (that of HipDeviceCompilerFor(arch), which
// the command runs) and `arch`. Throws std::invalid_argument when `arch` is
// not a gfx target.
HipCompilePlan PlanHipCompile(const kernels::KernelSource& source, const std::string& arch,
                              const std::string& compiler_version, const std::string& rtc_binary);

}  // namespace tiletune::runtime::hip
