#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/rtc/rtc_compiler.h"

namespace tiletune::runtime::cuda {

// The NVRTC entry points tiletune uses, mirroring nvrtc.h of CUDA 12/13
// (nvrtcResult is an int-sized enum, nvrtcProgram an opaque pointer).
struct NvrtcApi {
  using Program = struct _nvrtcProgram*;
  int (*nvrtcVersion)(int* major, int* minor);
  int (*nvrtcCreateProgram)(Program* program, const char* source, const char* name,
                            int header_count, const char* const* headers,
                            const char* const* include_names);
  int (*nvrtcDestroyProgram)(Program* program);
  int (*nvrtcCompileProgram)(Program program, int option_count, const char* const* options);
  int (*nvrtcGetProgramLogSize)(Program program, size_t* bytes);
  int (*nvrtcGetProgramLog)(Program program, char* log);
  int (*nvrtcGetCUBINSize)(Program program, size_t* bytes);
  int (*nvrtcGetCUBIN)(Program program, char* cubin);
  const char* (*nvrtcGetErrorString)(int result);
};

// NVRTC, opened with dlopen: compiles CUDA C++ straight to a CUBIN for one
// sm_XY[a] target, with ptxas's resource report (registers, shared memory,
// spills, stack) in the log.
class NvrtcCompiler final : public RtcCompiler {
 public:
  // Tries libnvrtc.so.13, .so.12 and .so in $CUDA_HOME/lib64, the loader's
  // search path and /usr/local/cuda/lib64; nullptr with every loader
  // message in `why` when none opens.
  static std::unique_ptr<NvrtcCompiler> Open(std::string* why);
  ~NvrtcCompiler() override;
  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  std::string_view name() const override { return "nvrtc"; }
  std::string version() const override { return version_; }  // "nvrtc 13.0"
  // `options` are NVRTC options; --gpu-architecture=<arch> and
  // --ptxas-options=-v are added. `arch` must be an sm_ target (a CUBIN).
  RtcOutput Compile(const std::string& source, const std::string& source_name,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::vector<std::string>& options, const std::string& arch) override;

  // Where the library was loaded from.
  const std::string& library() const { return library_; }

 private:
  NvrtcCompiler(std::string library, const NvrtcApi& api, std::string version);
  std::string Error(int result) const;

  const std::string library_;
  const NvrtcApi api_;
  const std::string version_;
};

}  // namespace tiletune::runtime::cuda
