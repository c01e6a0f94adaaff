#include "runtime/cuda/cublaslt_library.h"

#include <dlfcn.h>

#include <stdexcept>

namespace tiletune::runtime::cuda {
namespace {

// Points `fn` at `name` in the library; false (naming it in `missing`) when
// the library lacks it.
template <typename Fn>
bool Resolve(void* library, Fn*& fn, const char* name, std::string* missing) {
  void* symbol = ::dlsym(library, name);
  if (!symbol) {
    *missing = name;
    return false;
  }
  fn = reinterpret_cast<Fn*>(symbol);
  return true;
}

bool ResolveAll(void* lib, CublasLtApi& api, std::string* missing) {
  return Resolve(lib, api.cublasLtGetVersion, "cublasLtGetVersion", missing) &&
         Resolve(lib, api.cublasLtGetStatusName, "cublasLtGetStatusName", missing) &&
         Resolve(lib, api.cublasLtCreate, "cublasLtCreate", missing) &&
         Resolve(lib, api.cublasLtDestroy, "cublasLtDestroy", missing) &&
         Resolve(lib, api.cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate", missing) &&
         Resolve(lib, api.cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy", missing) &&
         Resolve(lib, api.cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute",
                 missing) &&
         Resolve(lib, api.cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", missing) &&
         Resolve(lib, api.cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", missing) &&
         Resolve(lib, api.cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute",
                 missing) &&
         Resolve(lib, api.cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate",
                 missing) &&
         Resolve(lib, api.cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy",
                 missing) &&
         Resolve(lib, api.cublasLtMatmulPreferenceSetAttribute,
                 "cublasLtMatmulPreferenceSetAttribute", missing) &&
         Resolve(lib, api.cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic",
                 missing) &&
         Resolve(lib, api.cublasLtMatmul, "cublasLtMatmul", missing);
}

}  // namespace

std::unique_ptr<CublasLtLibrary> CublasLtLibrary::Open(std::string* why) {
  std::string errors;
  for (const char* name :
       {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
        "/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.12",
        "/usr/local/cuda/lib64/libcublasLt.so"}) {
    void* library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* error = ::dlerror();
      errors += (errors.empty() ? "" : "; ") + std::string(error ? error : name);
      continue;
    }
    CublasLtApi api{};
    std::string missing;
    if (!ResolveAll(library, api, &missing)) {
      ::dlclose(library);
      *why = std::string(name) + " has no entry point " + missing;
      return nullptr;
    }
    return std::unique_ptr<CublasLtLibrary>(new CublasLtLibrary(api));
  }
  *why = "cuBLASLt not found: " + errors;
  return nullptr;
}

std::string CublasLtLibrary::Describe(cublasStatus_t status, const std::string& call) const {
  const char* name = api_.cublasLtGetStatusName(status);
  return call + " failed: " + (name ? name : "unknown status") + " (status " +
         std::to_string(status) + ")";
}

void CublasLtLibrary::Check(cublasStatus_t status, const std::string& call) const {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(Describe(status, call));
}

}  // namespace tiletune::runtime::cuda
