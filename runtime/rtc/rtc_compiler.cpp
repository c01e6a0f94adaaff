#include "runtime/rtc/rtc_compiler.h"

namespace tiletune::runtime {

std::unique_ptr<RtcCompiler> OpenRtcCompiler(std::string_view name, std::string* why) {
  if (name == "nvrtc") return OpenNvrtc(why);
  if (name == "hiprtc") return OpenHiprtc(why);
  if (name == "clang") return OpenClangHip(why);
  *why = "unknown run-time compiler '" + std::string(name) + "' (nvrtc, hiprtc, clang)";
  return nullptr;
}

}  // namespace tiletune::runtime
