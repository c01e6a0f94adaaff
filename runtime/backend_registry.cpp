#include "backend_registry.h"

#include <unistd.h>

#include <filesystem>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/hip/hip_backend.h"
#include "runtime/host/host_backend.h"

namespace tiletune::runtime {
namespace {

std::filesystem::path DefaultCacheDir() {
  return std::filesystem::temp_directory_path() / ("tiletune-cache-" + std::to_string(::getuid()));
}

}  // namespace

DiscoveredBackends DiscoverBackends(const BackendOptions& options) {
  DiscoveredBackends out;
  const std::filesystem::path cache_dir =
      options.cache_dir.empty() ? DefaultCacheDir() : std::filesystem::path(options.cache_dir);
  // Every backend takes the same cache settings; GPU ones also the program
  // that runs their device compiles.
  auto with_cache = [&](auto backend_options) {
    backend_options.cache_dir = cache_dir;
    backend_options.cache_max_bytes = options.cache_max_bytes;
    return backend_options;
  };
  auto with_rtc = [&](auto backend_options) {
    if (!options.rtc_binary.empty()) backend_options.rtc_binary = options.rtc_binary;
    return with_cache(backend_options);
  };
  for (const auto& name : options.enabled) {
    std::string why;
    std::unique_ptr<Backend> backend;
    if (name == "host") {
      host::HostBackend::Options host_options;
      host_options.compiler = options.host_compiler;
      host_options.openblas = options.host_openblas;
      backend = host::HostBackend::Open(with_cache(host_options), &why);
    } else if (name == "cuda") {
      backend = cuda::CudaBackend::Open(with_rtc(cuda::CudaBackend::Options{}), &why);
    } else if (name == "hip") {
      backend = hip::HipBackend::Open(with_rtc(hip::HipBackend::Options{}), &why);
    } else {
      why = "unknown backend (known: host, cuda, hip)";
    }
    // An opened backend may say what it lacks (the host without OpenBLAS).
    out.statuses.push_back({name, backend != nullptr, why});
    if (backend) out.backends.push_back(std::move(backend));
  }
  return out;
}

}  // namespace tiletune::runtime
