#include "runtime/cuda/nvrtc_compiler.h"

#include <dlfcn.h>

#include <cstdlib>

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

template <typename Fn>
bool Resolve(void* library, Fn*& fn, const char* name, std::string* missing) {
  fn = reinterpret_cast<Fn*>(::dlsym(library, name));
  if (!fn) *missing = name;
  return fn != nullptr;
}

bool ResolveAll(void* lib, NvrtcApi& api, std::string* missing) {
  return Resolve(lib, api.nvrtcVersion, "nvrtcVersion", missing) &&
         Resolve(lib, api.nvrtcCreateProgram, "nvrtcCreateProgram", missing) &&
         Resolve(lib, api.nvrtcDestroyProgram, "nvrtcDestroyProgram", missing) &&
         Resolve(lib, api.nvrtcCompileProgram, "nvrtcCompileProgram", missing) &&
         Resolve(lib, api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", missing) &&
         Resolve(lib, api.nvrtcGetProgramLog, "nvrtcGetProgramLog", missing) &&
         Resolve(lib, api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", missing) &&
         Resolve(lib, api.nvrtcGetCUBIN, "nvrtcGetCUBIN", missing) &&
         Resolve(lib, api.nvrtcGetErrorString, "nvrtcGetErrorString", missing);
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
  std::string errors;
  for (const auto& candidate : LibraryCandidates()) {
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = ::dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(error ? error : candidate);
      continue;
    }
    NvrtcApi api{};
    std::string missing;
    int major = 0, minor = 0;
    if (!ResolveAll(handle, api, &missing)) {
      errors += (errors.empty() ? "" : "; ") + candidate + " has no " + missing;
    } else if (const int result = api.nvrtcVersion(&major, &minor); result != kNvrtcSuccess) {
      errors += (errors.empty() ? "" : "; ") + candidate + ": nvrtcVersion failed (" +
                api.nvrtcGetErrorString(result) + ")";
    } else {
      return std::unique_ptr<NvrtcCompiler>(new NvrtcCompiler(
          candidate, api, "nvrtc " + std::to_string(major) + "." + std::to_string(minor)));
    }
    ::dlclose(handle);
  }
  *why = "NVRTC not found: " + errors;
  return nullptr;
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
