#include "tuner/baseline_step.h"

#include <algorithm>

#include "tuner/device_description_of.h"

namespace tiletune::tuner {

std::optional<TimedBaseline> TimeBaseline(TuningRun& run) {
  TimedBaseline out{.baseline = run.session.space.first().BaselineFor(
                        run.item.key, DeviceDescriptionOf(run.session.device))};
  const kernels::Baseline& baseline = out.baseline;
  if (!baseline.vendor_library.empty()) {
    if (auto why = run.session.backend.VendorLibraryMissing(baseline.vendor_library)) {
      return run.Fail("baseline " + baseline.name + ": " + *why);
    }
  } else if (!baseline.source) {
    return run.Fail("baseline " + baseline.name + " has no source to compile");
  }

  worker::v1::BenchRequest request = run.request;
  request.set_vendor_baseline(baseline.vendor_library);
  if (baseline.source) {
    const auto compiled = run.Compile(*baseline.source);
    if (!compiled) return run.Cancel();
    if (!compiled->ok) return run.Fail("baseline failed to compile: " + compiled->log);
    out.artifact_path = compiled->artifact_path;
    request.set_artifact_path(out.artifact_path);
    request.set_entry(baseline.source->entry);
    *request.mutable_launch() = baseline.source->launch;
  }

  using Clock = std::chrono::steady_clock;
  const TuningLimits& limits = run.session.limits;
  const auto started = Clock::now();
  const auto result = run.session.worker.Run(
      request, std::chrono::milliseconds(static_cast<int64_t>(limits.run_limit_max_seconds * 1000)),
      &run.cancel);
  const double wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (result.outcome == BenchmarkWorker::Outcome::kCancelled) return run.Cancel();
  if (result.outcome != BenchmarkWorker::Outcome::kOk) {
    return run.Fail("baseline " + baseline.name + " " + OutcomeName(result.outcome) + ": " +
                    result.error);
  }
  out.timing = result.response.timing();
  run.progress.set_baseline_us(out.timing.median_us());
  out.run_limit = std::chrono::milliseconds(static_cast<int64_t>(
      1000 * std::clamp(limits.run_limit_factor * wall_seconds, limits.run_limit_min_seconds,
                        limits.run_limit_max_seconds)));
  return out;
}

}  // namespace tiletune::tuner
