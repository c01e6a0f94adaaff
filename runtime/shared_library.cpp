#include "runtime/shared_library.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

namespace tiletune::runtime {
namespace {

// The file behind a loaded library with its symlinks followed: its name
// carries the full version (libamdhip64.so.5.2.21153).
std::string ResolvedFileName(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !*map->l_name) {
    return fallback;
  }
  std::error_code ec;
  const auto path = std::filesystem::canonical(map->l_name, ec);
  return ec ? fallback : path.filename().string();
}

}  // namespace

std::optional<SharedLibrary> OpenSharedLibrary(const std::vector<std::string>& names,
                                               const char* required_symbol, std::string* why) {
  std::string reasons;
  for (const auto& name : names) {
    void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = ::dlerror();
      reasons += (reasons.empty() ? "" : "; ") + (error ? std::string(error) : name);
      continue;
    }
    if (!::dlsym(handle, required_symbol)) {
      reasons += (reasons.empty() ? "" : "; ") + name + " has no " + required_symbol;
      ::dlclose(handle);
      continue;
    }
    return SharedLibrary{handle, name, ResolvedFileName(handle, name)};
  }
  *why = reasons;
  return std::nullopt;
}

void* FindSymbol(const SharedLibrary& library, const char* symbol) {
  return ::dlsym(library.handle, symbol);
}

}  // namespace tiletune::runtime
