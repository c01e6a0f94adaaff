#pragma once

#include <string>

#include "kernels/core/kernel_template.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/device_executor.h"

namespace tiletune::bench {

// The unfused sequence's second kernel: kernels/gemm's epilogue pass
// (EpiloguePassSource), the same pass the tuner's cuBLASLt baseline runs
// after a plain product, applying the key's chain in place to C. Compiled
// for one key, it lives in its own module of the current context (the
// executor holds one module at a time, the tuned GEMM's).
class EpiloguePassKernel {
 public:
  // Loads the compiled `source` from its CUBIN file; throws
  // std::runtime_error naming the failed call.
  EpiloguePassKernel(const runtime::cuda::CudaDriver& driver, const kernels::KernelSource& source,
                     const std::string& cubin_path);
  ~EpiloguePassKernel();
  EpiloguePassKernel(const EpiloguePassKernel&) = delete;
  EpiloguePassKernel& operator=(const EpiloguePassKernel&) = delete;

  // Queues the pass on the legacy default stream over the problem's output,
  // with its chain tensors, at the source's launch geometry.
  void Enqueue(const runtime::KernelArguments& args) const;

 private:
  const runtime::cuda::CudaDriver& driver_;
  v1::LaunchGeometry launch_;
  std::string entry_;
  runtime::cuda::CUmodule module_ = nullptr;
  runtime::cuda::CUfunction function_ = nullptr;
};

}  // namespace tiletune::bench
