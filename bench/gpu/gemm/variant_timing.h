#pragma once

#include <optional>
#include <string>

#include "bench/gpu/gemm/session_choice.h"
#include "bench/gpu/gemm/stream_timing.h"
#include "kernels/core/kernel_template.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/device_executor.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/problem_inputs.h"

namespace tiletune::bench {

// How this process compiles, checks and times one kernel.
struct TimingSettings {
  runtime::cuda::CubinCompiler& compiler;
  std::string arch;  // sm_90...
  int threads = 1;   // threads computing the float64 reference
  TimingProtocol protocol;
  double tolerance = 2e-2;  // relative L2 error allowed for bf16 output
};

// One variant timed in this process.
struct VariantTiming {
  v1::Timing timing;
  double rel_error = 0;
  std::string error;  // why it was not timed (compile, load, launch, wrong output)
};

// The daemon tuner's choice for one key, then that variant timed here with
// the same protocol as the vendor library beside it.
struct TunedVariant {
  SessionChoice choice;
  std::optional<VariantTiming> timed;  // of choice.variant; absent when there is none
};

// Whether `t`'s variant was timed here and its output checked out.
bool Timed(const TunedVariant& t);

// Compiles `variant` of the template, loads it, checks its output against
// `reference` (the problem's, whole or on sampled rows) and times it. `args`
// are the uploaded problem's (device_problem.h). Failures end up in the
// result's error, not in exceptions.
VariantTiming TimeVariant(const TimingSettings& settings, const kernels::KernelTemplate& t,
                          const tuner::ProblemInputs& problem, const tuner::Reference& reference,
                          runtime::DeviceExecutor& executor, runtime::KernelArguments args,
                          const kernels::Variant& variant);

}  // namespace tiletune::bench
