#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/baseline_step.h"
#include "tuner/tuning_run.h"

namespace tiletune::tuner {

// One kernel in the final interleaved re-timing.
struct Contender {
  const v1::Trial* trial = nullptr;  // null for the baseline
  kernels::KernelSource source;
  std::string artifact_path;
  std::string vendor_baseline;  // the baseline's vendor library call, if it has one
  // The vendor call's algorithm the baseline step kept; a re-timing that
  // ran another (the library refused it) fails.
  std::optional<v1::VendorAlgorithm> vendor_algorithm;
  std::vector<double> round_medians_s;
  int repetitions = 0;
  v1::DeviceState last_state;
  std::string error;  // why a re-timing run failed; it then drops out

  // The median of its per-round medians, and as spread the (p90 - p10) /
  // median of those medians (how much the rounds differed).
  v1::Timing timing() const;
};

// A variant that may go into the record.
struct DecidedVariant {
  v1::Trial trial;  // as the search timed it
  v1::LaunchGeometry launch;
  v1::Timing timing;  // over the interleaved rounds
};

// What the re-timing decided.
struct Verdict {
  v1::Decision decision;  // the numbers and the reason
  // The baseline's re-timing; its first timing when it was not re-timed or
  // a re-timing run failed.
  v1::Timing baseline;
  // The fastest variant that finished every re-timing round, when the
  // baseline did too; served only when `tuned`.
  std::optional<DecidedVariant> fastest;
  bool tuned = false;  // fastest beats the baseline by min_speedup and the noise
};

// The decision: the best and second-best of `timed` (every trial that passed
// the search) and the baseline are re-timed interleaved, so that drift
// (clocks, heat, neighbours) hits all alike; the faster variant is served
// only when it beats the baseline by more than min_speedup and more than the
// noise of those re-timings. nullopt when cancelled (run.Cancel).
std::optional<Verdict> Decide(TuningRun& run, const TimedBaseline& baseline,
                              std::vector<v1::Trial> timed);

// The verdict from the re-timed contenders: `variants` fastest first by the
// search's timing (none: nothing was re-timed), `baseline_rounds` the
// baseline's re-timing.
Verdict Judge(const std::vector<Contender>& variants, const Contender& baseline_rounds,
              const TimedBaseline& baseline, const TuningLimits& limits);

}  // namespace tiletune::tuner
