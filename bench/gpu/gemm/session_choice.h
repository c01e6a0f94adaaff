#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/tuning/session_runner.h"
#include "kernels/core/kernel_template.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::bench {

// What the daemon's tuner (a TuningSession) decided for one key, and the
// variant the benchmark then times in its own process.
struct SessionChoice {
  // The record's winner: "tuned" (the daemon serves `variant`) or "vendor"
  // (it serves `baseline_name`); empty when the session made no record.
  std::string served;
  std::string baseline_name;
  std::string decision;  // the record's reason for the winner
  // The record's config: the winner, or with VENDOR the fastest variant
  // that finished the decision's re-timing; without one, the fastest
  // variant the search timed. None when no variant passed.
  std::optional<kernels::Variant> variant;
  // The template `variant` belongs to (the key's space may span several).
  const kernels::KernelTemplate* kernel = nullptr;
  // The worker's median for `variant` (the decision's re-timing, else the
  // search's) and the baseline's; 0 when unknown.
  double session_us = 0, baseline_us = 0;
  double session_seconds = 0;  // the session's wall time
  int variants = 0;            // trials the session ran
  int compile_failed = 0;      // the compiler or the loader rejected them
  int rejected = 0;            // register spills (TuningLimits::reject_spills)
  int run_failed = 0;          // hung (compiling or running) or crashed
  int wrong = 0;               // output checks that failed in the worker
  std::string first_failure;   // the first of those failures, for the report
  std::string error;           // why the session made no record
  // Each template of the key's space that ran trials: how many, and its
  // fastest passing variant (what pruning a family or ranking it needs).
  struct TemplateBest {
    int trials = 0;
    double best_us = 0;  // 0: none passed
    std::string best_variant;
  };
  std::map<std::string, TemplateBest> per_template;
  // Every trial, in the order the session ran them: what one tunable is
  // worth is read off these (the best with it against the best without).
  struct TrialTiming {
    std::string kernel, variant, status;
    double median_us = 0;  // 0: it did not pass
  };
  std::vector<TrialTiming> trials;
};

// Tunes `key` (normalized) with the daemon's tuner: an exhaustive search of
// the key's whole space (every template serving it), with the default TuningLimits except for the
// time budget, which is lifted so that every variant is timed.
SessionChoice TuneWholeSpace(TuningSessionRunner& runner, const v1::KernelKey& key);

// The choice's fields by their names (the variant as a VariantString).
nlohmann::json SessionChoiceJson(const SessionChoice& choice);

}  // namespace tiletune::bench
