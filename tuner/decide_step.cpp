#include "tuner/decide_step.h"

#include <algorithm>
#include <cstdio>

#include "tuner/decision_margin.h"
#include "tuner/worker/timing_summary.h"

namespace tiletune::tuner {
namespace {

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * fraction);
  return text;
}

// The two fastest of `timed` (sorted) that compile again, as contenders;
// nullopt when cancelled.
std::optional<std::vector<Contender>> FastestTwo(TuningRun& run,
                                                 const std::vector<v1::Trial>& timed) {
  std::vector<Contender> variants;
  for (const auto& t : timed) {
    if (variants.size() == 2) break;
    const kernels::Variant params(t.params().begin(), t.params().end());
    const auto index = run.session.space.IndexOf(t.kernel_name());
    if (!index) continue;  // a template this build no longer has
    const kernels::KernelTemplate& kernel = *run.session.space.templates()[*index].kernel;
    Contender c{.trial = &t, .source = kernel.Source(run.item.key, params)};
    const auto compiled = run.Compile(c.source);
    if (!compiled) return std::nullopt;
    if (!compiled->ok) continue;
    c.artifact_path = compiled->artifact_path;
    variants.push_back(std::move(c));
  }
  return variants;
}

// Re-times the variants and then the baseline, in interleaved rounds
// (A B C A B C ...); false when cancelled.
bool Retime(TuningRun& run, std::chrono::milliseconds run_limit, std::vector<Contender>& variants,
            Contender& baseline_rounds) {
  worker::v1::BenchRequest request = run.request;
  // Every contender was validated when it was first timed.
  request.set_skip_validation(true);
  auto time_once = [&](Contender& c) {
    if (!c.error.empty()) return true;
    request.set_vendor_baseline(c.vendor_baseline);
    request.clear_vendor_algorithm();
    if (c.vendor_algorithm)
      *request.mutable_vendor_algorithm()->mutable_chosen() = *c.vendor_algorithm;
    request.set_artifact_path(c.artifact_path);
    request.set_entry(c.source.entry);
    *request.mutable_launch() = c.source.launch;
    request.mutable_params()->clear();
    if (c.trial) {
      request.mutable_params()->insert(c.trial->params().begin(), c.trial->params().end());
    }
    const auto result = run.session.worker.Run(request, run_limit, &run.cancel);
    if (result.outcome == BenchmarkWorker::Outcome::kCancelled) return false;
    if (result.outcome != BenchmarkWorker::Outcome::kOk) {
      c.error = std::string("re-timing ") + OutcomeName(result.outcome) + ": " + result.error;
      return true;
    }
    if (c.vendor_algorithm &&
        result.response.vendor_algorithm().algo() != c.vendor_algorithm->algo()) {
      c.error = "re-timing ran " + result.response.vendor_algorithm().description();
      return true;
    }
    c.round_medians_s.push_back(result.response.timing().median_us() * 1e-6);
    c.repetitions += result.response.timing().repetitions();
    c.last_state = result.response.timing().device_state();
    return true;
  };
  for (int round = 0; round < run.session.limits.decision_rounds; ++round) {
    for (auto& c : variants) {
      if (!time_once(c)) return false;
    }
    if (!time_once(baseline_rounds)) return false;
  }
  return true;
}

}  // namespace

v1::Timing Contender::timing() const {
  v1::Timing t = SummarizeTimes(round_medians_s);
  t.set_repetitions(repetitions);
  *t.mutable_device_state() = last_state;
  return t;
}

std::optional<Verdict> Decide(TuningRun& run, const TimedBaseline& baseline,
                              std::vector<v1::Trial> timed) {
  std::sort(timed.begin(), timed.end(), [](const v1::Trial& a, const v1::Trial& b) {
    return a.timing().median_us() < b.timing().median_us();
  });
  auto variants = FastestTwo(run, timed);
  if (!variants) return run.Cancel();
  Contender baseline_rounds{.source = baseline.baseline.source.value_or(kernels::KernelSource{}),
                            .artifact_path = baseline.artifact_path,
                            .vendor_baseline = baseline.baseline.vendor_library,
                            .vendor_algorithm = baseline.algorithm};
  if (!variants->empty() && !Retime(run, baseline.run_limit, *variants, baseline_rounds)) {
    return run.Cancel();
  }
  return Judge(*variants, baseline_rounds, baseline, run.session.limits);
}

Verdict Judge(const std::vector<Contender>& variants, const Contender& baseline_rounds,
              const TimedBaseline& baseline, const TuningLimits& limits) {
  Verdict verdict;
  v1::Decision& decision = verdict.decision;
  decision.set_rounds(limits.decision_rounds);
  verdict.baseline = baseline.timing;
  if (variants.empty()) {
    decision.set_reason("no variant passed validation and timing");
    return verdict;
  }
  if (baseline_rounds.error.empty()) verdict.baseline = baseline_rounds.timing();
  *decision.mutable_baseline() = verdict.baseline;
  *decision.mutable_winner() = variants[0].timing();
  if (variants.size() == 2) {
    *decision.mutable_runner_up() = variants[1].timing();
    decision.mutable_runner_up_params()->insert(variants[1].trial->params().begin(),
                                                variants[1].trial->params().end());
  }
  if (!baseline_rounds.error.empty()) {
    decision.set_reason("baseline " + baseline_rounds.error);
    return verdict;
  }
  const Contender* chosen = nullptr;
  for (const Contender& c : variants) {
    if (!c.error.empty() || c.round_medians_s.empty()) continue;
    if (!chosen || c.timing().median_us() < chosen->timing().median_us()) chosen = &c;
  }
  if (!chosen) {
    decision.set_reason("every variant failed its re-timing: " + variants[0].error);
    return verdict;
  }

  // Paired per round: the chosen variant's time over the baseline's, taken
  // back to back, so that drift between rounds cancels out.
  std::vector<double> ratios;
  for (size_t r = 0; r < chosen->round_medians_s.size(); ++r) {
    ratios.push_back(chosen->round_medians_s[r] / baseline_rounds.round_medians_s[r]);
  }
  const DecisionMargin margin = JudgeMargin(ratios, limits.min_speedup, limits.noise_factor);
  decision.set_noise(margin.noise);
  decision.set_required_margin(margin.required);
  decision.set_measured_margin(margin.measured);
  decision.set_reason(std::string(margin.tuned ? "beats " : "does not beat ") + baseline.label() +
                      " by " + Percent(margin.measured) + " (needed more than " +
                      Percent(margin.required) + ": min_speedup " +
                      std::to_string(limits.min_speedup) + ", noise " + Percent(margin.noise) +
                      " x " + std::to_string(limits.noise_factor) + ")");
  verdict.fastest = DecidedVariant{
      .trial = *chosen->trial, .launch = chosen->source.launch, .timing = chosen->timing()};
  verdict.tuned = margin.tuned;
  if (verdict.tuned && !baseline.baseline.vendor_gap.empty() && !limits.serve_over_vendor_gap) {
    // A tuned kernel that may lose to what users already run is never served.
    verdict.tuned = false;
    decision.set_reason(decision.reason() +
                        "; kept as the vendor's: " + baseline.baseline.vendor_gap);
  }
  return verdict;
}

}  // namespace tiletune::tuner
