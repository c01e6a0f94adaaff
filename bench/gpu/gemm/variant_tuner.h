#pragma once

#include <string>

#include "bench/gpu/gemm/stream_timing.h"
#include "kernels/core/kernel_template.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/device_executor.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::bench {

// The outcome of tuning one key: the fastest variant whose output checked
// out, and what happened to the others.
struct TunedVariant {
  std::string variant;  // VariantString of the winner; empty when none won
  v1::Timing timing;    // the winner's
  double rel_error = 0;
  int variants = 0;           // valid points of the search space
  int compile_failed = 0;     // NVRTC rejected them or timed out
  int run_failed = 0;         // load or launch errors
  int wrong = 0;              // output checks that failed
  std::string first_failure;  // the first of those failures, for the report
};

struct TunerSettings {
  runtime::cuda::CubinCompiler& compiler;
  std::string arch;  // sm_90...
  int threads = 1;   // parallel compiles
  TimingProtocol protocol;
  double tolerance = 2e-2;  // relative L2 error allowed for bf16 output
};

// tiletune's search for one key, in this process: compiles every valid
// variant of the template (`threads` at a time), times each one compiled,
// and picks the fastest correct one. With `check_every`, every variant's
// output is checked against `reference` before it is timed; otherwise the
// fastest are checked until one passes. `args` are the uploaded problem's
// (device_problem.h).
TunedVariant TuneVariants(const TunerSettings& settings, const kernels::KernelTemplate& tile_gemm,
                          const tuner::ProblemInputs& problem, const tuner::Reference& reference,
                          runtime::DeviceExecutor& executor, runtime::KernelArguments args,
                          bool check_every);

}  // namespace tiletune::bench
