#pragma once

#include "bench/gpu/gemm/gemm_report.h"
#include "bench/gpu/gemm/gemm_shapes.h"
#include "bench/gpu/gemm/stream_timing.h"
#include "bench/gpu/gemm/variant_timing.h"
#include "bench/tuning/session_runner.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/device_executor.h"

namespace tiletune::bench {

// What one comparison runs on: the daemon's tuner (its worker on the same
// GPU), the GPU's executor in this process (memory, the chosen kernel,
// cache flushes), the driver (the epilogue pass's own module), cuBLASLt, the
// stream timer and this process's compile and timing settings.
struct ComparisonRig {
  TuningSessionRunner& tuner;
  runtime::DeviceExecutor& executor;
  const runtime::cuda::CudaDriver& driver;
  const runtime::cuda::CublasLtLibrary& cublaslt;
  StreamTimer& timer;
  TimingSettings timing;
  // cuBLASLt heuristic algorithms tried per way of running the key (the
  // daemon's baseline_algorithms).
  int algorithms = 8;
};

// Tunes tiletune's tile GEMM for the shape and epilogue with the daemon's
// tuner (TuneWholeSpace), then times the variant it chose in this process
// and measures cuBLASLt on the same inputs and buffers with the same
// protocol, as the tuner's baseline runs it (tuner::BaselineRoutes): with
// its own epilogue where that computes the chain (plain, GELU_BIAS), and,
// for any chain, unfused: its plain GEMM followed by kernels/gemm's
// epilogue pass; each with every algorithm its heuristic offers (at most
// rig.algorithms). The row keeps all of them, heuristic #0 of the first way
// (the baseline before best-of-N) and the fastest correct one. Every
// contender's output is checked: on a sample for large shapes, whole for
// small ones (ChecksWholeOutput). Failures end up in the row (its error, or
// the contender's), not in exceptions.
ComparisonRow Compare(ComparisonRig& rig, const GemmShape& shape, Epilogue epilogue,
                      Precision precision, BLayout b_layout);

}  // namespace tiletune::bench
