#pragma once

#include <memory>
#include <string>

#include "runtime/rtc/rtc_compiler.h"

namespace tiletune::runtime::hip {

// hipRTC, declared here so that building needs no ROCm headers: types and
// signatures mirror ROCm's <hip/hiprtc.h> (HIP 5.x and 6.x).
using hiprtcResult = int;
inline constexpr hiprtcResult HIPRTC_SUCCESS = 0;
using hiprtcProgram = struct _hiprtcProgram*;

struct HiprtcApi {
  const char* (*hiprtcGetErrorString)(hiprtcResult result);
  hiprtcResult (*hiprtcVersion)(int* major, int* minor);
  hiprtcResult (*hiprtcCreateProgram)(hiprtcProgram* program, const char* source, const char* name,
                                      int header_count, const char** headers,
                                      const char** include_names);
  hiprtcResult (*hiprtcCompileProgram)(hiprtcProgram program, int option_count,
                                       const char** options);
  hiprtcResult (*hiprtcDestroyProgram)(hiprtcProgram* program);
  hiprtcResult (*hiprtcGetProgramLogSize)(hiprtcProgram program, size_t* size);
  hiprtcResult (*hiprtcGetProgramLog)(hiprtcProgram program, char* log);
  hiprtcResult (*hiprtcGetCodeSize)(hiprtcProgram program, size_t* size);
  hiprtcResult (*hiprtcGetCode)(hiprtcProgram program, char* code);
};

// Compiles HIP device code to an AMD GPU code object with hipRTC. On ROCm 6
// hipRTC is its own library (libhiprtc.so); on ROCm 5 it lives inside
// libamdhip64. It needs no GPU: Debian's ROCm 5.2 (libamdhip64-5,
// libhiprtc-builtins5, libamd-comgr2, whose comgr carries the device
// libraries) compiles for gfx90a on a machine without one.
//
// Beware: ROCm 5.2's hipRTC aborts the process on a target its LLVM does not
// know (gfx940+, gfx1100+) instead of returning an error. Compiles therefore
// run in tiletune-rtc, where that is a failed compile, not a dead daemon.
class HiprtcCompiler final : public RtcCompiler {
 public:
  // nullptr with `why` when no library with hipRTC loads.
  static std::unique_ptr<HiprtcCompiler> Open(std::string* why);

  std::string_view name() const override { return "hiprtc"; }
  // "hiprtc 6.2 (libhiprtc.so.6.2.60200, libamd_comgr.so.2.8.60200)": the
  // files name the exact build, which hipRTC's own version (0.0 on Debian's
  // ROCm 5.2) does not.
  std::string version() const override { return version_; }
  // Adds --offload-arch=<arch> to `options`. The binary is a code object
  // (ELF) that hipModuleLoadData accepts. Compiler messages name
  // `source_name` instead of hipRTC's temporary file.
  RtcOutput Compile(const std::string& source, const std::string& source_name,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::vector<std::string>& options, const std::string& arch) override;

 private:
  HiprtcCompiler(HiprtcApi api, std::string version);
  std::string Describe(const char* call, hiprtcResult result) const;

  const HiprtcApi api_;
  const std::string version_;
};

}  // namespace tiletune::runtime::hip
