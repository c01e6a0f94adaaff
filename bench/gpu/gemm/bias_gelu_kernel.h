#pragma once

#include <cstdint>
#include <string>

#include "kernels/kernel_template.h"
#include "runtime/cuda/cuda_driver_api.h"

namespace tiletune::bench {

// The unfused reference's second kernel: C[i][j] = GELU_tanh(C[i][j] +
// bias[j]) in place on a row-major bf16 C, in f32, rounded to nearest even
// — what a framework runs after a plain cuBLASLt GEMM. bf16 is handled as
// raw bits so the source needs no CUDA header.
kernels::KernelSource BiasGeluSource();

// The compiled kernel in its own module of the current context (the
// executor holds one module at a time, the tuned GEMM's).
class BiasGeluKernel {
 public:
  // Loads the CUBIN file; throws std::runtime_error naming the failed call.
  BiasGeluKernel(const runtime::cuda::CudaDriver& driver, const std::string& cubin_path);
  ~BiasGeluKernel();
  BiasGeluKernel(const BiasGeluKernel&) = delete;
  BiasGeluKernel& operator=(const BiasGeluKernel&) = delete;

  // Queues the kernel on the legacy default stream for an m x n C.
  void Enqueue(void* c, const void* bias, int64_t m, int64_t n) const;

 private:
  const runtime::cuda::CudaDriver& driver_;
  runtime::cuda::CUmodule module_ = nullptr;
  runtime::cuda::CUfunction function_ = nullptr;
};

}  // namespace tiletune::bench
