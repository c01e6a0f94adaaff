#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "kernels/core/kernel_template.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/tuning_run.h"

namespace tiletune::tuner {

// The baseline as first timed, before any variant: what a variant must
// beat, and how long a variant may run.
struct TimedBaseline {
  kernels::Baseline baseline;
  std::string artifact_path;  // of the compiled source, when it has one
  v1::Timing timing;
  // Any later worker run's limit: run_limit_factor times the baseline's
  // wall time in the worker, within [run_limit_min, run_limit_max] seconds.
  std::chrono::milliseconds run_limit{0};
};

// Compiles (if it has a source), validates and times the template's baseline
// for the item; a vendor library call is made by the worker, with the
// compiled pass (if any) that follows it. nullopt when the item failed or
// was cancelled (run.Fail / run.Cancel).
std::optional<TimedBaseline> TimeBaseline(TuningRun& run);

}  // namespace tiletune::tuner
