#include "runtime/cuda/nvrtc_compiler.h"

#include <cstdlib>

#include "runtime/shared_library.h"

namespace tiletune::runtime {
namespace cuda {
namespace {

constexpr int kNvrtcSuccess = 0;

// Library paths to try, in order: an explicit $CUDA_HOME first, then what
// the loader finds, then the toolkit's default prefix.
std::vector<std::string> LibraryCandidates() {
  const std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) {
    dirs.push_back(std::string(home) + "/lib64/");
  }
  dirs.push_back("");
  dirs.push_back("/usr/local/cuda/lib64/");
  std::vector<std::string> candidates;
  for (const auto& dir : dirs) {
    for (const auto& name : names) candidates.push_back(dir + name);
  }
  return candidates;
}

bool ResolveAll(const SharedLibrary& lib, NvrtcApi& api, std::string* missing) {
  bool ok = true;
  ok &= ResolveSymbol(lib, "nvrtcVersion", &api.nvrtcVersion, missing);
  ok &= ResolveSymbol(lib, "nvrtcCreateProgram", &api.nvrtcCreateProgram, missing);
  ok &= ResolveSymbol(lib, "nvrtcDestroyProgram", &api.nvrtcDestroyProgram, missing);
  ok &= ResolveSymbol(lib, "nvrtcCompileProgram", &api.nvrtcCompileProgram, missing);
  ok &= ResolveSymbol(lib, "nvrtcGetProgramLogSize", &api.nvrtcGetProgramLogSize, missing);
  ok &= ResolveSymbol(lib, "nvrtcGetProgramLog", &api.nvrtcGetProgramLog, missing);
  ok &= ResolveSymbol(lib, "nvrtcGetCUBINSize", &api.nvrtcGetCUBINSize, missing);
  ok &= ResolveSymbol(lib, "nvrtcGetCUBIN", &api.nvrtcGetCUBIN, missing);
  ok &= ResolveSymbol(lib, "nvrtcGetErrorString", &api.nvrtcGetErrorString, missing);
  return ok;
}

// Destroys the program however Compile returns.
struct ProgramGuard {
  const NvrtcApi& api;
  NvrtcApi::Program program = nullptr;
  ~ProgramGuard() {
    if (program) api.nvrtcDestroyProgram(&program);
  }
};

}  // namespace

std::unique_ptr<NvrtcCompiler> NvrtcCompiler::Open(std::string* why) {
  // NVRTC (CUDA 12.9+) caches compiles on disk and, on a hit, skips ptxas
  // and its -v resource report: registers, spills and shared memory would
  // read 0 on any warm machine. tiletune keeps its own compiled-code cache,
  // report included, so NVRTC's is turned off before the library loads.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  std::string tried;
  const auto library = OpenSharedLibrary(LibraryCandidates(), "nvrtcVersion", &tried);
  if (!library) {
    *why = "NVRTC not found: " + tried;
    return nullptr;
  }
  NvrtcApi api{};
  std::string missing;
  if (!ResolveAll(*library, api, &missing)) {
    *why = library->name + " has no " + missing;
    return nullptr;
  }
  int major = 0, minor = 0;
  if (const int result = api.nvrtcVersion(&major, &minor); result != kNvrtcSuccess) {
    *why = library->name + ": nvrtcVersion failed (" + api.nvrtcGetErrorString(result) + ")";
    return nullptr;
  }
  return std::unique_ptr<NvrtcCompiler>(new NvrtcCompiler(
      library->name, api, "nvrtc " + std::to_string(major) + "." + std::to_string(minor)));
}

NvrtcCompiler::NvrtcCompiler(std::string library, const NvrtcApi& api, std::string version)
    : library_(std::move(library)), api_(api), version_(std::move(version)) {}

// NVRTC stays loaded for the life of the process: it keeps allocations of its
// own until exit, which unloading would orphan, and reopening costs more.
NvrtcCompiler::~NvrtcCompiler() = default;

std::string NvrtcCompiler::Error(int result) const {
  const char* text = api_.nvrtcGetErrorString(result);
  return text ? text : "nvrtcResult " + std::to_string(result);
}

RtcOutput NvrtcCompiler::Compile(const std::string& source, const std::string& source_name,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::vector<std::string>& options, const std::string& arch) {
  RtcOutput out;
  if (!arch.starts_with("sm_")) {
    out.log = "nvrtc: target '" + arch + "' is not a CUBIN target (expected sm_XY or sm_XYa)";
    return out;
  }
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  ProgramGuard guard{api_};
  if (const int r = api_.nvrtcCreateProgram(&guard.program, source.c_str(), source_name.c_str(),
                                            static_cast<int>(headers.size()), header_texts.data(),
                                            header_names.data());
      r != kNvrtcSuccess) {
    out.log = "nvrtcCreateProgram failed: " + Error(r);
    return out;
  }

  std::vector<std::string> all_options = options;
  all_options.push_back("--gpu-architecture=" + arch);
  all_options.push_back("--ptxas-options=-v");  // the resource report, into the log
  std::vector<const char*> option_ptrs;
  for (const auto& option : all_options) option_ptrs.push_back(option.c_str());
  const int compiled = api_.nvrtcCompileProgram(guard.program, static_cast<int>(option_ptrs.size()),
                                                option_ptrs.data());

  size_t log_bytes = 0;
  if (api_.nvrtcGetProgramLogSize(guard.program, &log_bytes) == kNvrtcSuccess && log_bytes > 1) {
    std::string log(log_bytes, '\0');
    if (api_.nvrtcGetProgramLog(guard.program, log.data()) == kNvrtcSuccess) {
      log.resize(log_bytes - 1);  // the size counts the terminating NUL
      out.log = std::move(log);
    }
  }
  if (compiled != kNvrtcSuccess) {
    out.log += "\nnvrtcCompileProgram failed: " + Error(compiled);
    return out;
  }

  size_t cubin_bytes = 0;
  if (const int r = api_.nvrtcGetCUBINSize(guard.program, &cubin_bytes); r != kNvrtcSuccess) {
    out.log += "\nnvrtcGetCUBINSize failed: " + Error(r);
    return out;
  }
  out.binary.resize(cubin_bytes);
  if (const int r = api_.nvrtcGetCUBIN(guard.program, out.binary.data()); r != kNvrtcSuccess) {
    out.binary.clear();
    out.log += "\nnvrtcGetCUBIN failed: " + Error(r);
    return out;
  }
  out.ok = !out.binary.empty();
  if (!out.ok) out.log += "\nnvrtc produced an empty CUBIN";
  return out;
}

}  // namespace cuda

std::unique_ptr<RtcCompiler> OpenNvrtc(std::string* why) {
  return cuda::NvrtcCompiler::Open(why);
}

}  // namespace tiletune::runtime
