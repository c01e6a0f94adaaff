#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "runtime/rtc/rtc_compiler.h"

namespace tiletune::runtime::hip {

// Compiles HIP device code to an AMD GPU code object with upstream clang, for
// the targets Debian's hipRTC (ROCm 5.2) does not know: gfx942 (MI300X) and
// gfx950 (MI355X). It compiles what hipRTC would: the same source, options
// and built-in preamble (hipRTC's own text, read out of libhiprtc-builtins),
// into a raw code object (v5, no offload bundle) that hipModuleLoadData
// accepts, with ROCm 5.2's device libraries linked explicitly.
//
// This is upstream LLVM with ROCm 5.2 device libraries, not AMD's ROCm 6
// compiler; no object it made has run on an AMD GPU.
class ClangHipCompiler final : public RtcCompiler {
 public:
  // nullptr with `why` when clang (>= 22), the hipRTC preamble or a device
  // library is missing. clang is $TILETUNE_HIP_CLANG, else clang++-22 in
  // PATH, else /usr/lib/llvm-22/bin/clang++.
  static std::unique_ptr<ClangHipCompiler> Open(std::string* why);

  std::string_view name() const override { return "clang"; }
  // "clang 22.1.8 (/usr/bin/clang++-22; hipRTC preamble sha256:1a2b3c4d5e6f
  // of libhiprtc-builtins.so.5.2.21153; device libraries sha256:...)": what
  // decides the code, so that the compiled-code cache keys on it.
  std::string version() const override { return version_; }
  // Runs clang in a folder of its own below $TMPDIR; its process group dies
  // with this process (tiletune-rtc calls KillChildGroupsOnExit), so killing
  // tiletune-rtc past the compile limit also ends the compile.
  RtcOutput Compile(const std::string& source, const std::string& source_name,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::vector<std::string>& options, const std::string& arch) override;

  // The targets this compiler serves and whose ISA constant it links.
  static const std::vector<std::string>& Archs();

 private:
  ClangHipCompiler(std::string clang, std::string preamble, std::vector<std::string> hip_defines,
                   std::vector<std::filesystem::path> libraries,
                   std::vector<std::filesystem::path> isa_libraries, std::string version);

  const std::string clang_;
  const std::string preamble_;
  const std::vector<std::string> hip_defines_;
  const std::vector<std::filesystem::path> libraries_;
  const std::vector<std::filesystem::path> isa_libraries_;  // one per Archs() entry
  const std::string version_;
};

}  // namespace tiletune::runtime::hip
