#pragma once

#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels/core/search_space.h"
#include "tiletune/v1/jobs.pb.h"
#include "tuner/baseline_step.h"
#include "tuner/search_strategy.h"
#include "tuner/tuning_run.h"

namespace tiletune::tuner {

// The variants an item plans to try in a key space of `valid_variants`:
// the budget's share of them, plus the planted faults (plant_faults). Its
// job reports it from the job's creation on; the plan only grows later,
// when variants remembered as failures are skipped in place of others.
int PlannedVariants(const v1::SearchBudget& budget, const TuningLimits& limits,
                    size_t valid_variants);

// The search over the key space (every serving template) for one item: the job's strategy
// picks variants, the compile pool works ahead of the worker, and the worker
// validates and times them one at a time, within the budget (variants and
// seconds). Variants remembered as failures are skipped without a run.
class VariantExploration {
 public:
  // Plans the search and resumes it from `previous` (trials this item ran
  // before a restart: they count against the budget and are not run again).
  // Sets the progress's plan and counts, before the baseline runs.
  VariantExploration(TuningRun& run, const std::vector<v1::Trial>& previous);

  // Runs the search; every trial that passed validation and timing, the
  // previous ones included. nullopt when cancelled (run.Cancel).
  std::optional<std::vector<v1::Trial>> Explore(const TimedBaseline& baseline);

 private:
  // A variant on its way from the strategy to the worker.
  struct Pending {
    kernels::Variant variant;
    kernels::KernelSource source;
    // Invalid for a known failure, which is never compiled.
    std::shared_future<runtime::CompileResult> compiled;
    bool known_failure = false;
  };

  // Draws variants from the planted faults, then from the strategy, until
  // the pipeline is full, the budget is spent or the strategy has no more.
  void Refill();
  void SkipKnownFailure(const Pending& pending);
  // Fills the trial from the compile and, if it compiled cleanly, from the
  // worker's validation and timing; false when cancelled.
  bool Measure(const Pending& pending, const runtime::CompileResult& compiled,
               const TimedBaseline& baseline, v1::Trial& trial);
  // Tells the strategy and the progress what the trial showed.
  void Learn(const Pending& pending, const runtime::ResourceReport& resources,
             const v1::Trial& trial);
  v1::Trial NewTrial(const Pending& pending) const;

  TuningRun& run_;
  const int max_variants_;
  const double max_seconds_;
  std::unique_ptr<SearchStrategy> strategy_;
  // Planted faults run on top of the budget, unless remembered as failures.
  std::deque<kernels::Variant> planted_;
  int planted_count_ = 0;
  std::set<std::string> tried_;
  int attempts_ = 0;  // variants compiled, against max_variants
  std::optional<v1::Trial> best_;
  std::vector<v1::Trial> timed_;
  std::deque<Pending> pipeline_;
  worker::v1::BenchRequest request_;
};

}  // namespace tiletune::tuner
