#include "backend_registry.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>

#include "runtime/host/host_backend.h"

namespace tiletune::runtime {
namespace {

// Whether one of a vendor's driver libraries loads here: the name that
// loaded, or the loader's reasons for each name.
struct LibraryProbe {
  bool found = false;
  std::string detail;
};

LibraryProbe ProbeLibrary(const std::vector<const char*>& names) {
  LibraryProbe probe;
  for (const char* name : names) {
    if (void* handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      ::dlclose(handle);
      return {true, name};
    }
    const char* error = ::dlerror();
    probe.detail += (probe.detail.empty() ? "" : "; ") + std::string(error ? error : name);
  }
  return probe;
}

// GPU backends are detected but not driven yet: say so instead of failing
// later in a compile.
BackendStatus ProbeGpuBackend(const std::string& name, const std::vector<const char*>& libraries) {
  const LibraryProbe probe = ProbeLibrary(libraries);
  if (!probe.found) return {name, false, "driver library not found: " + probe.detail};
  return {name, false,
          probe.detail + " found, but the " + name + " backend is not implemented in this build"};
}

std::filesystem::path DefaultCacheDir() {
  return std::filesystem::temp_directory_path() / ("tiletune-cache-" + std::to_string(::getuid()));
}

}  // namespace

DiscoveredBackends DiscoverBackends(const BackendOptions& options) {
  DiscoveredBackends out;
  for (const auto& name : options.enabled) {
    if (name == "host") {
      host::HostBackend::Options host_options;
      host_options.compiler = options.host_compiler;
      host_options.cache_dir =
          options.cache_dir.empty() ? DefaultCacheDir() : std::filesystem::path(options.cache_dir);
      host_options.cache_max_bytes = options.cache_max_bytes;
      std::string why;
      if (auto backend = host::HostBackend::Open(host_options, &why)) {
        out.backends.push_back(std::move(backend));
        out.statuses.push_back({name, true, ""});
      } else {
        out.statuses.push_back({name, false, why});
      }
    } else if (name == "cuda") {
      out.statuses.push_back(ProbeGpuBackend(name, {"libcuda.so.1"}));
    } else if (name == "hip") {
      out.statuses.push_back(
          ProbeGpuBackend(name, {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}));
    } else {
      out.statuses.push_back({name, false, "unknown backend (known: host, cuda, hip)"});
    }
  }
  return out;
}

}  // namespace tiletune::runtime
