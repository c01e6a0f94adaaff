#include "tuner/baseline_step.h"

#include <algorithm>

#include "runtime/baseline_candidate.h"
#include "tuner/device_description_of.h"

namespace tiletune::tuner {

std::string TimedBaseline::label() const {
  if (!algorithm) return baseline.name;
  return baseline.name + " algo " + std::to_string(algorithm->heuristic_index()) + " of " +
         std::to_string(algorithm->heuristic_results());
}

std::vector<BaselineRoute> BaselineRoutes(const kernels::Baseline& baseline) {
  if (baseline.vendor_library.empty()) return {{baseline.name, true}};
  std::vector<BaselineRoute> routes;
  // A vendor call that comes without a pass computes the key by itself.
  if (baseline.vendor_call_suffices || !baseline.source) {
    routes.push_back({baseline.vendor_library, false});
  }
  if (baseline.source) routes.push_back({baseline.name, true});
  return routes;
}

std::optional<TimedBaseline> TimeBaseline(TuningRun& run) {
  const kernels::Baseline baseline =
      run.session.space.first().BaselineFor(run.item.key, DeviceDescriptionOf(run.session.device));
  const bool vendor = !baseline.vendor_library.empty();
  if (vendor) {
    if (auto why = run.session.backend.VendorLibraryMissing(baseline.vendor_library)) {
      return run.Fail("baseline " + baseline.name + ": " + *why);
    }
  } else if (!baseline.source) {
    return run.Fail("baseline " + baseline.name + " has no source to compile");
  }
  const std::vector<BaselineRoute> routes = BaselineRoutes(baseline);

  std::string artifact_path;
  if (baseline.source) {
    const auto compiled = run.Compile(*baseline.source);
    if (!compiled) return run.Cancel();
    if (!compiled->ok) return run.Fail("baseline failed to compile: " + compiled->log);
    artifact_path = compiled->artifact_path;
  }

  using Clock = std::chrono::steady_clock;
  const TuningLimits& limits = run.session.limits;
  const auto limit =
      std::chrono::milliseconds(static_cast<int64_t>(limits.run_limit_max_seconds * 1000));
  std::vector<v1::BaselineCandidate> candidates;
  std::vector<size_t> route_of;  // per candidate
  double longest_wall_seconds = 0;
  for (size_t r = 0; r < routes.size(); ++r) {
    worker::v1::BenchRequest request = run.request;
    request.set_vendor_baseline(baseline.vendor_library);
    if (routes[r].with_source) {
      request.set_artifact_path(artifact_path);
      request.set_entry(baseline.source->entry);
      *request.mutable_launch() = baseline.source->launch;
    }
    if (vendor)
      request.mutable_vendor_algorithm()->set_heuristic_requested(limits.baseline_algorithms);
    // How many algorithms to try: the first answer says how many the
    // heuristic offered.
    int algorithms = 1;
    for (int index = 0; index < algorithms; ++index) {
      if (vendor) request.mutable_vendor_algorithm()->set_heuristic_index(index);
      const auto started = Clock::now();
      const auto result = run.session.worker.Run(request, limit, &run.cancel);
      longest_wall_seconds = std::max(
          longest_wall_seconds, std::chrono::duration<double>(Clock::now() - started).count());
      if (result.outcome == BenchmarkWorker::Outcome::kCancelled) return run.Cancel();
      v1::BaselineCandidate& candidate = candidates.emplace_back();
      route_of.push_back(r);
      if (result.response.has_vendor_algorithm()) {
        *candidate.mutable_algorithm() = result.response.vendor_algorithm();
        if (index == 0) {
          algorithms = std::min(limits.baseline_algorithms,
                                result.response.vendor_algorithm().heuristic_results());
        }
      }
      if (result.outcome != BenchmarkWorker::Outcome::kOk) {
        candidate.set_error(
            TruncateError(std::string(OutcomeName(result.outcome)) + ": " + result.error));
        continue;
      }
      *candidate.mutable_timing() = result.response.timing();
      candidate.set_rel_error(result.response.rel_error());
    }
  }

  const v1::BaselineCandidate* kept = runtime::FastestCandidate(candidates);
  if (!kept) {
    const v1::BaselineCandidate& first = candidates.front();
    if (candidates.size() == 1) return run.Fail("baseline " + routes[0].name + " " + first.error());
    return run.Fail("baseline " + baseline.name + ": none of its " +
                    std::to_string(candidates.size()) + " candidates ran correctly; the first (" +
                    (first.has_algorithm() ? first.algorithm().description() : routes[0].name) +
                    "): " + first.error());
  }
  const BaselineRoute& route = routes[route_of[static_cast<size_t>(kept - candidates.data())]];
  TimedBaseline out{.baseline = {.name = route.name,
                                 .vendor_library = baseline.vendor_library,
                                 .vendor_gap = baseline.vendor_gap}};
  if (route.with_source) {
    out.baseline.source = baseline.source;
    out.artifact_path = artifact_path;
  }
  out.timing = kept->timing();
  if (kept->has_algorithm()) out.algorithm = kept->algorithm();
  run.progress.set_baseline_us(out.timing.median_us());
  out.run_limit = std::chrono::milliseconds(static_cast<int64_t>(
      1000 * std::clamp(limits.run_limit_factor * longest_wall_seconds,
                        limits.run_limit_min_seconds, limits.run_limit_max_seconds)));
  out.candidates = std::move(candidates);
  return out;
}

}  // namespace tiletune::tuner
