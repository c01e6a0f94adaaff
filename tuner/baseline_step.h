#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/tuning_run.h"

namespace tiletune::tuner {

// The baseline as first timed, before any variant: what a variant must
// beat, and how long a variant may run.
struct TimedBaseline {
  // The candidate kept: its name, its source only when it runs one (the
  // epilogue pass after a vendor call), its vendor library.
  kernels::Baseline baseline;
  std::string artifact_path;  // of the kept candidate's source, when it has one
  v1::Timing timing;          // the kept candidate's
  // The kept candidate's vendor algorithm, for a library that has them.
  std::optional<v1::VendorAlgorithm> algorithm;
  // Every candidate tried, in order (Record.baseline_candidates).
  std::vector<v1::BaselineCandidate> candidates;
  // Any later worker run's limit: run_limit_factor times the longest
  // candidate's wall time in the worker (the first one's includes computing
  // the reference), within [run_limit_min, run_limit_max] seconds.
  std::chrono::milliseconds run_limit{0};

  // "cublasLt+gemm_epilogue_pass algo 3 of 8": the name, and which of the
  // heuristic's algorithms where it has them.
  std::string label() const;
};

// Compiles (if it has a source), validates and times the template's
// baseline for the item and keeps its fastest correct candidate. A vendor
// library call is made by the worker, once per algorithm its heuristic
// offers (at most limits.baseline_algorithms), both alone where the
// library's own epilogue computes the key's chain and followed by the
// compiled epilogue pass where the key has a chain; a candidate that fails
// or is wrong is dropped. nullopt when no candidate was correct (run.Fail)
// or the item was cancelled (run.Cancel).
std::optional<TimedBaseline> TimeBaseline(TuningRun& run);

// The one way, or the two, the baseline runs: {name, with its source}. A
// vendor call runs alone where it suffices or comes without a source, and
// followed by its source where it has one.
struct BaselineRoute {
  std::string name;
  bool with_source = false;
};
std::vector<BaselineRoute> BaselineRoutes(const kernels::Baseline& baseline);

}  // namespace tiletune::tuner
