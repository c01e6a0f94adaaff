#include "tuner/tuning_session.h"

#include "tuner/baseline_step.h"
#include "tuner/decide_step.h"
#include "tuner/explore_step.h"
#include "tuner/record_step.h"
#include "tuner/tuning_run.h"

namespace tiletune::tuner {

double ToleranceFor(const v1::KernelKey& key, const TuningLimits& limits) {
  if (key.input_dtype() != v1::DTYPE_F32) return limits.tolerance_half;
  return key.allow_tf32() ? limits.tolerance_tf32 : limits.tolerance_f32;
}

TuningSession::TuningSession(const kernels::KeySpace& space, runtime::Backend& backend,
                             const runtime::DeviceInfo& device, BenchmarkWorker& worker,
                             CompilePool& pool, const TuningLimits& limits)
    : parts_{space, backend, device, worker, pool, limits} {}

TuningOutcome TuningSession::Run(const TuningItem& item, const std::vector<v1::Trial>& previous,
                                 TuningObserver& observer, const std::atomic<bool>& cancel) {
  TuningRun run{.session = parts_, .item = item, .observer = observer, .cancel = cancel};
  // Planned (and resumed) before the baseline runs, so that an item whose
  // baseline fails still reports its plan.
  VariantExploration exploration(run, previous);
  // Watchers see the item running with its plan before the baseline's time.
  observer.OnProgress(run.progress, v1::JobEvent::KIND_ITEM_STARTED, nullptr);
  const std::optional<TimedBaseline> baseline = TimeBaseline(run);
  if (!baseline) return run.Stopped();
  std::optional<std::vector<v1::Trial>> timed = exploration.Explore(*baseline);
  if (!timed) return run.Stopped();
  const std::optional<Verdict> verdict = Decide(run, *baseline, std::move(*timed));
  if (!verdict) return run.Stopped();
  return run.Succeed(RecordOf(item, parts_.device, *baseline, *verdict));
}

}  // namespace tiletune::tuner
