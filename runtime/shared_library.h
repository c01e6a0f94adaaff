#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tiletune::runtime {

// A vendor library (GPU driver, NVRTC, cuBLASLt, HIP, NVML...) opened with
// dlopen, so that building needs no vendor toolkit. It is never closed: these
// libraries start threads, keep allocations and register exit handlers that
// must outlive every object of ours, and unloading them under those crashes
// or leaks at exit.
struct SharedLibrary {
  void* handle = nullptr;
  std::string name;  // the name that loaded, e.g. "libamdhip64.so.5"
  std::string file;  // the file it resolved to, e.g. "libamdhip64.so.5.2.21153"
};

// Opens the first of `names` that loads and exports `required_symbol`;
// nullopt with `why` giving the loader's reason for each name.
std::optional<SharedLibrary> OpenSharedLibrary(const std::vector<std::string>& names,
                                               const char* required_symbol, std::string* why);

// The address of `symbol` in `library`, or nullptr.
void* FindSymbol(const SharedLibrary& library, const char* symbol);

// Resolves `symbol` into `*fn`; false, with `symbol` appended to `missing`,
// when the library lacks it.
template <typename Fn>
bool ResolveSymbol(const SharedLibrary& library, const char* symbol, Fn* fn, std::string* missing) {
  *fn = reinterpret_cast<Fn>(FindSymbol(library, symbol));
  if (*fn) return true;
  *missing += (missing->empty() ? "" : ", ") + std::string(symbol);
  return false;
}

}  // namespace tiletune::runtime
