#pragma once

#include "bench/gpu/gemm/bias_gelu_kernel.h"
#include "bench/gpu/gemm/gemm_report.h"
#include "bench/gpu/gemm/gemm_shapes.h"
#include "bench/gpu/gemm/stream_timing.h"
#include "bench/gpu/gemm/variant_tuner.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/device_executor.h"

namespace tiletune::bench {

// What one comparison runs on: the GPU's executor (memory, the tuned
// kernels, cache flushes), cuBLASLt, the unfused epilogue kernel, the
// stream timer and tiletune's compile and timing settings.
struct ComparisonRig {
  runtime::DeviceExecutor& executor;
  const runtime::cuda::CublasLtLibrary& cublaslt;
  const BiasGeluKernel& bias_gelu;
  StreamTimer& timer;
  TunerSettings tuner;
};

// Tunes tiletune's tile GEMM for the shape and epilogue and measures
// cuBLASLt on the same inputs and buffers with the same protocol (for a
// fused epilogue: its GELU_BIAS epilogue, and its plain GEMM followed by the
// bias+GELU kernel, which is bf16 only: f32 rows have no unfused column).
// Every contender's output is checked: on a sample for large shapes, whole
// for small ones (ValidatesEveryVariant). Failures end up in the row (its
// error, or the contender's), not in exceptions.
ComparisonRow Compare(ComparisonRig& rig, const GemmShape& shape, Epilogue epilogue,
                      Precision precision);

}  // namespace tiletune::bench
