#include "runtime/hip/hiprtc_compiler.h"

#include <regex>

#include "runtime/shared_library.h"

namespace tiletune::runtime::hip {
namespace {

// Where hipRTC lives: its own library on ROCm 6, inside libamdhip64 on ROCm 5.
const std::vector<std::string> kHiprtcLibraries = {
    "libhiprtc.so.6",   "libhiprtc.so",   "/opt/rocm/lib/libhiprtc.so",
    "libamdhip64.so.5", "libamdhip64.so", "/opt/rocm/lib/libamdhip64.so"};

// The code object manager that does hipRTC's compiling, opened only to name
// its build in the version: ROCm 6.4+ ships .so.3, earlier releases .so.2.
const std::vector<std::string> kComgrLibraries = {"libamd_comgr.so.3", "libamd_comgr.so.2",
                                                  "/opt/rocm/lib/libamd_comgr.so"};

std::string ComgrVersion() {
  std::string ignored;
  const auto comgr = OpenSharedLibrary(kComgrLibraries, "amd_comgr_get_version", &ignored);
  return comgr ? comgr->file : "comgr not found";
}

// comgr compiles a copy of the source named like
// /tmp/comgr-6f1a2b/input/CompileSource; messages should name ours.
std::string NameSourceInLog(const std::string& log, const std::string& source_name) {
  static const std::regex kComgrInput(R"(\S*/input/CompileSource)");
  return std::regex_replace(log, kComgrInput, source_name);
}

}  // namespace

std::unique_ptr<HiprtcCompiler> HiprtcCompiler::Open(std::string* why) {
  std::string tried;
  auto library = OpenSharedLibrary(kHiprtcLibraries, "hiprtcCreateProgram", &tried);
  if (!library) {
    *why = "hipRTC not found: " + tried;
    return nullptr;
  }
  HiprtcApi api{};
  std::string missing;
  bool ok = true;
  ok &= ResolveSymbol(*library, "hiprtcGetErrorString", &api.hiprtcGetErrorString, &missing);
  ok &= ResolveSymbol(*library, "hiprtcVersion", &api.hiprtcVersion, &missing);
  ok &= ResolveSymbol(*library, "hiprtcCreateProgram", &api.hiprtcCreateProgram, &missing);
  ok &= ResolveSymbol(*library, "hiprtcCompileProgram", &api.hiprtcCompileProgram, &missing);
  ok &= ResolveSymbol(*library, "hiprtcDestroyProgram", &api.hiprtcDestroyProgram, &missing);
  ok &= ResolveSymbol(*library, "hiprtcGetProgramLogSize", &api.hiprtcGetProgramLogSize, &missing);
  ok &= ResolveSymbol(*library, "hiprtcGetProgramLog", &api.hiprtcGetProgramLog, &missing);
  ok &= ResolveSymbol(*library, "hiprtcGetCodeSize", &api.hiprtcGetCodeSize, &missing);
  ok &= ResolveSymbol(*library, "hiprtcGetCode", &api.hiprtcGetCode, &missing);
  if (!ok) {
    *why = library->name + " lacks " + missing;
    return nullptr;
  }
  int major = 0, minor = 0;
  if (const hiprtcResult r = api.hiprtcVersion(&major, &minor); r != HIPRTC_SUCCESS) {
    *why = library->name + ": hiprtcVersion failed with hiprtcResult " + std::to_string(r);
    return nullptr;
  }
  std::string version = "hiprtc " + std::to_string(major) + "." + std::to_string(minor) + " (" +
                        library->file + ", " + ComgrVersion() + ")";
  return std::unique_ptr<HiprtcCompiler>(new HiprtcCompiler(api, std::move(version)));
}

HiprtcCompiler::HiprtcCompiler(HiprtcApi api, std::string version)
    : api_(api), version_(std::move(version)) {}

std::string HiprtcCompiler::Describe(const char* call, hiprtcResult result) const {
  const char* text = api_.hiprtcGetErrorString(result);
  return std::string(call) + ": " + (text ? text : "hiprtcResult " + std::to_string(result));
}

RtcOutput HiprtcCompiler::Compile(const std::string& source, const std::string& source_name,
                                  const std::vector<std::pair<std::string, std::string>>& headers,
                                  const std::vector<std::string>& options,
                                  const std::string& arch) {
  RtcOutput out;
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  hiprtcProgram program = nullptr;
  if (const hiprtcResult r = api_.hiprtcCreateProgram(&program, source.c_str(), source_name.c_str(),
                                                      static_cast<int>(headers.size()),
                                                      header_texts.data(), header_names.data());
      r != HIPRTC_SUCCESS) {
    out.log = Describe("hiprtcCreateProgram", r);
    return out;
  }

  const std::string arch_option = "--offload-arch=" + arch;
  std::vector<const char*> argv;
  for (const auto& option : options) argv.push_back(option.c_str());
  argv.push_back(arch_option.c_str());
  const hiprtcResult compiled =
      api_.hiprtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());

  size_t log_size = 0;
  if (api_.hiprtcGetProgramLogSize(program, &log_size) == HIPRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (api_.hiprtcGetProgramLog(program, log.data()) == HIPRTC_SUCCESS) {
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
      out.log = NameSourceInLog(log, source_name);
    }
  }
  if (compiled != HIPRTC_SUCCESS) {
    out.log += (out.log.empty() || out.log.back() == '\n' ? "" : "\n") +
               Describe("hiprtcCompileProgram", compiled) + " for " + arch + "\n";
  } else {
    size_t code_size = 0;
    hiprtcResult r = api_.hiprtcGetCodeSize(program, &code_size);
    if (r == HIPRTC_SUCCESS && code_size == 0) {
      out.log += "hiprtcGetCodeSize: empty code object for " + arch + "\n";
    } else if (r != HIPRTC_SUCCESS) {
      out.log += Describe("hiprtcGetCodeSize", r) + "\n";
    } else {
      out.binary.resize(code_size);
      r = api_.hiprtcGetCode(program, out.binary.data());
      if (r == HIPRTC_SUCCESS) {
        out.ok = true;
      } else {
        out.binary.clear();
        out.log += Describe("hiprtcGetCode", r) + "\n";
      }
    }
  }
  api_.hiprtcDestroyProgram(&program);
  return out;
}

}  // namespace tiletune::runtime::hip

namespace tiletune::runtime {

std::unique_ptr<RtcCompiler> OpenHiprtc(std::string* why) {
  return hip::HiprtcCompiler::Open(why);
}

}  // namespace tiletune::runtime
