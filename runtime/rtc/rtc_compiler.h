#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tiletune::runtime {

struct RtcOutput {
  bool ok = false;
  std::string binary;  // cubin (NVRTC) or code object (hipRTC)
  std::string log;     // compiler log; with NVRTC also ptxas's resource report
};

// A vendor run-time compiler for device code, opened with dlopen so that a
// machine without it still runs tiletune. Compiles run inside tiletune-rtc
// (a subprocess the backend can kill past its time limit) and in tests.
class RtcCompiler {
 public:
  virtual ~RtcCompiler() = default;
  virtual std::string_view name() const = 0;  // "nvrtc", "hiprtc", "clang"
  virtual std::string version() const = 0;    // e.g. "nvrtc 13.0"
  // One translation unit for `arch` (sm_90, sm_90a, gfx90a); headers are
  // handed to the compiler in memory by their include names.
  virtual RtcOutput Compile(const std::string& source, const std::string& source_name,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const std::vector<std::string>& options, const std::string& arch) = 0;
};

// nullptr with `why` when the library is absent or unusable.
std::unique_ptr<RtcCompiler> OpenNvrtc(std::string* why);   // runtime/cuda/
std::unique_ptr<RtcCompiler> OpenHiprtc(std::string* why);  // runtime/hip/
// clang for the AMD targets hipRTC cannot serve (gfx942, gfx950).
std::unique_ptr<RtcCompiler> OpenClangHip(std::string* why);  // runtime/hip/

// The compiler by name ("nvrtc" / "hiprtc" / "clang").
std::unique_ptr<RtcCompiler> OpenRtcCompiler(std::string_view name, std::string* why);

}  // namespace tiletune::runtime
