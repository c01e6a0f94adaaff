#include "runtime/rtc/rtc_compiler.h"

namespace tiletune::runtime {

std::unique_ptr<RtcCompiler> OpenRtcCompiler(std::string_view name, std::string* why) {
  if (name == "nvrtc") return OpenNvrtc(why);
  if (name == "hiprtc") return OpenHiprtc(why);
  *why = "unknown run-time compiler '" + std::string(name) + "' (nvrtc, hiprtc)";
  return nullptr;
}

}  // namespace tiletune::runtime
