#include "kernels/ops/gemm/cublaslt_baseline.h"

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/blas_epilogue.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/gemm/tile_gemm_source.h"

namespace tiletune::kernels::gemm {

Baseline CublasLtBaseline(const v1::KernelKey& key) {
  Baseline baseline;
  baseline.vendor_library = std::string(kCublasLtName);
  baseline.vendor_call_suffices = FoldIntoBlasEpilogue(key).fused;
  const v1::KernelKey k = NormalizeKernelKey(key);
  if (k.chain_size() == 0 && !Gated(k)) {
    baseline.name = std::string(kCublasLtName);
  } else {
    baseline.name = std::string(kCublasLtName) + "+" + std::string(kEpiloguePassName);
    baseline.source = EpiloguePassSource(key, kSm90Target);
  }
  return baseline;
}

}  // namespace tiletune::kernels::gemm
