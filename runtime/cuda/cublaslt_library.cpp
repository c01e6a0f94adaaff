#include "runtime/cuda/cublaslt_library.h"

#include <stdexcept>

#include "runtime/shared_library.h"

namespace tiletune::runtime::cuda {
namespace {

bool ResolveAll(const SharedLibrary& lib, CublasLtApi& api, std::string* missing) {
  bool ok = true;
  ok &= ResolveSymbol(lib, "cublasLtGetVersion", &api.cublasLtGetVersion, missing);
  ok &= ResolveSymbol(lib, "cublasLtGetStatusName", &api.cublasLtGetStatusName, missing);
  ok &= ResolveSymbol(lib, "cublasLtCreate", &api.cublasLtCreate, missing);
  ok &= ResolveSymbol(lib, "cublasLtDestroy", &api.cublasLtDestroy, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulDescCreate", &api.cublasLtMatmulDescCreate, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulDescDestroy", &api.cublasLtMatmulDescDestroy, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulDescSetAttribute", &api.cublasLtMatmulDescSetAttribute,
                      missing);
  ok &= ResolveSymbol(lib, "cublasLtMatrixLayoutCreate", &api.cublasLtMatrixLayoutCreate, missing);
  ok &=
      ResolveSymbol(lib, "cublasLtMatrixLayoutDestroy", &api.cublasLtMatrixLayoutDestroy, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatrixLayoutSetAttribute",
                      &api.cublasLtMatrixLayoutSetAttribute, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulPreferenceCreate", &api.cublasLtMatmulPreferenceCreate,
                      missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulPreferenceDestroy", &api.cublasLtMatmulPreferenceDestroy,
                      missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulPreferenceSetAttribute",
                      &api.cublasLtMatmulPreferenceSetAttribute, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulAlgoGetHeuristic", &api.cublasLtMatmulAlgoGetHeuristic,
                      missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulAlgoCheck", &api.cublasLtMatmulAlgoCheck, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmulAlgoConfigGetAttribute",
                      &api.cublasLtMatmulAlgoConfigGetAttribute, missing);
  ok &= ResolveSymbol(lib, "cublasLtMatmul", &api.cublasLtMatmul, missing);
  return ok;
}

}  // namespace

std::unique_ptr<CublasLtLibrary> CublasLtLibrary::Open(std::string* why) {
  std::string tried;
  const auto library = OpenSharedLibrary(
      {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
       "/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.12",
       "/usr/local/cuda/lib64/libcublasLt.so"},
      "cublasLtCreate", &tried);
  if (!library) {
    *why = "cuBLASLt not found: " + tried;
    return nullptr;
  }
  CublasLtApi api{};
  std::string missing;
  if (!ResolveAll(*library, api, &missing)) {
    *why = library->name + " has no entry point " + missing;
    return nullptr;
  }
  return std::unique_ptr<CublasLtLibrary>(new CublasLtLibrary(api));
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
