#include "tuner/tuning_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>

#include <google/protobuf/util/time_util.h>
#include <spdlog/spdlog.h>

#include "kernels/kernel_key.h"
#include "runtime/content_hash.h"
#include "tuner/decision_margin.h"
#include "tuner/search_strategy.h"
#include "tuner/worker/timing_summary.h"

namespace tiletune::tuner {
namespace {

using Clock = std::chrono::steady_clock;
using google::protobuf::util::TimeUtil;

constexpr size_t kMaxErrorText = 4096;

std::string Truncate(std::string text) {
  if (text.size() > kMaxErrorText) text.resize(kMaxErrorText);
  return text;
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// The key of a variant among those already tried; planted faults are their own
// variants.
std::string TriedKey(const google::protobuf::Map<std::string, int64_t>& params) {
  return kernels::VariantString(kernels::Variant(params.begin(), params.end()));
}

bool IsFailure(v1::TrialStatus status) {
  return status != v1::TRIAL_OK && status != v1::TRIAL_SLOWER;
}

// Outcomes in the worker that say the variant itself is broken.
bool IsRunFailure(v1::TrialStatus status) {
  return status == v1::TRIAL_TIMEOUT || status == v1::TRIAL_CRASH ||
         status == v1::TRIAL_WRONG_RESULT;
}

struct Pending {
  kernels::Variant variant;
  kernels::KernelSource source;
  // Invalid for a known failure, which is never compiled.
  std::shared_future<runtime::CompileResult> compiled;
  bool known_failure = false;
};

// Waits for a compile, giving up when the job is cancelled.
std::optional<runtime::CompileResult> AwaitCompile(
    const std::shared_future<runtime::CompileResult>& compiled, const std::atomic<bool>& cancel) {
  while (compiled.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    if (cancel.load()) return std::nullopt;
  }
  try {
    return compiled.get();
  } catch (const std::exception& e) {
    runtime::CompileResult failed;
    failed.log = std::string("compile task failed: ") + e.what();
    return failed;
  }
}

v1::TrialStatus StatusOf(BenchmarkWorker::Outcome outcome) {
  switch (outcome) {
    case BenchmarkWorker::Outcome::kOk: return v1::TRIAL_OK;
    case BenchmarkWorker::Outcome::kTimeout: return v1::TRIAL_TIMEOUT;
    case BenchmarkWorker::Outcome::kCrash: return v1::TRIAL_CRASH;
    case BenchmarkWorker::Outcome::kWrongResult: return v1::TRIAL_WRONG_RESULT;
    case BenchmarkWorker::Outcome::kLoadError: return v1::TRIAL_COMPILE_ERROR;
    case BenchmarkWorker::Outcome::kRunError: return v1::TRIAL_CRASH;
    case BenchmarkWorker::Outcome::kCancelled: return v1::TRIAL_CANCELLED;
  }
  return v1::TRIAL_CRASH;
}

// The interleaved re-timings of one contender as one Timing: the median of
// its per-round medians, and as spread the (p90 - p10) / median of those
// medians (how much the rounds differed).
v1::Timing RoundsTiming(const std::vector<double>& round_medians_s, int repetitions,
                        const v1::DeviceState& last_state) {
  v1::Timing t = SummarizeTimes(round_medians_s);
  t.set_repetitions(repetitions);
  *t.mutable_device_state() = last_state;
  return t;
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * fraction);
  return text;
}

}  // namespace

// One kernel in the final interleaved re-timing.
struct TuningSession::Contender {
  const v1::Trial* trial = nullptr;  // null for the baseline
  kernels::KernelSource source;
  std::string artifact_path;
  std::string vendor_baseline;  // the baseline's vendor library call, if it has one
  std::vector<double> round_medians_s;
  int repetitions = 0;
  v1::DeviceState last_state;
  std::string error;  // why a re-timing run failed; it then drops out

  v1::Timing timing() const { return RoundsTiming(round_medians_s, repetitions, last_state); }
};

bool TuningSession::Retime(std::vector<Contender>& contenders, worker::v1::BenchRequest request,
                           std::chrono::milliseconds run_limit, const std::atomic<bool>& cancel) {
  // Every contender was validated when it was first timed.
  request.set_skip_validation(true);
  for (int round = 0; round < limits_.decision_rounds; ++round) {
    for (auto& c : contenders) {
      if (!c.error.empty()) continue;
      request.set_vendor_baseline(c.vendor_baseline);
      request.set_artifact_path(c.artifact_path);
      request.set_entry(c.source.entry);
      *request.mutable_launch() = c.source.launch;
      request.mutable_params()->clear();
      if (c.trial)
        request.mutable_params()->insert(c.trial->params().begin(), c.trial->params().end());
      const auto result = worker_.Run(request, run_limit, &cancel);
      if (result.outcome == BenchmarkWorker::Outcome::kCancelled) return false;
      if (result.outcome != BenchmarkWorker::Outcome::kOk) {
        c.error = std::string("re-timing ") + OutcomeName(result.outcome) + ": " + result.error;
        continue;
      }
      c.round_medians_s.push_back(result.response.timing().median_us() * 1e-6);
      c.repetitions += result.response.timing().repetitions();
      c.last_state = result.response.timing().device_state();
    }
  }
  return true;
}

TuningSession::TuningSession(const kernels::KernelTemplate& kernel_template,
                             runtime::Backend& backend, const runtime::DeviceInfo& device,
                             BenchmarkWorker& worker, CompilePool& pool, const TuningLimits& limits)
    : template_(kernel_template),
      backend_(backend),
      device_(device),
      worker_(worker),
      pool_(pool),
      limits_(limits) {}

TuningOutcome TuningSession::Run(const TuningItem& item, const std::vector<v1::Trial>& previous,
                                 TuningObserver& observer, const std::atomic<bool>& cancel) {
  const auto started = Clock::now();
  const auto& budget = item.spec.budget();
  const int max_variants =
      std::min(budget.max_variants() > 0 ? budget.max_variants() : limits_.default_max_variants,
               limits_.max_variants_cap);
  const double max_seconds =
      budget.max_seconds() > 0 ? budget.max_seconds() : limits_.default_max_seconds;
  // A fixed seed per item keeps a resumed item on the plan it started with.
  const uint64_t seed = (item.spec.seed() ? item.spec.seed() : 0x7ee7u) + item.item_index;
  const double tolerance = item.key.input_dtype() != v1::DTYPE_F32 ? limits_.tolerance_half
                           : item.key.allow_tf32()                 ? limits_.tolerance_tf32
                                                                   : limits_.tolerance_f32;

  TuningOutcome out;
  v1::JobItemProgress& progress = out.progress;
  progress.set_index(item.item_index);
  *progress.mutable_key() = item.key;
  progress.set_state(v1::JOB_RUNNING);

  auto fail = [&](std::string error) {
    progress.set_state(v1::JOB_FAILED);
    progress.set_error(Truncate(std::move(error)));
    observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
    return out;
  };
  auto cancelled = [&] {
    progress.set_state(v1::JOB_CANCELLED);
    observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
    return out;
  };

  const kernels::SearchSpace space = template_.Space(item.key);

  // What earlier runs of this item already did.
  std::set<std::string> tried;
  std::optional<v1::Trial> best;
  int attempts = 0;
  std::vector<v1::Trial> timed;  // every trial that passed validation and timing
  for (const auto& t : previous) {
    tried.insert(TriedKey(t.params()));
    if (t.status() != v1::TRIAL_SKIPPED_KNOWN_FAILURE) ++attempts;
    if (t.status() != v1::TRIAL_COMPILE_ERROR) progress.set_compiled(progress.compiled() + 1);
    if (IsFailure(t.status())) {
      progress.set_failed(progress.failed() + 1);
    } else {
      progress.set_benchmarked(progress.benchmarked() + 1);
      timed.push_back(t);
      if (!best || t.timing().median_us() < best->timing().median_us()) best = t;
    }
  }

  // Computed once: for the plan's size, the planted faults and the strategy.
  std::vector<kernels::Variant> valid = space.ValidVariants();
  std::deque<kernels::Variant> planted;
  // Planted faults run on top of the budget, unless remembered as failures.
  int planted_count = 0;
  if (limits_.plant_faults) {
    if (!valid.empty()) {
      for (int fault : {1, 2, 3}) {
        kernels::Variant v = valid.front();
        v[std::string(kernels::kPlantedFault)] = fault;
        if (!item.known_failures.contains(kernels::VariantString(v))) ++planted_count;
        if (!tried.contains(kernels::VariantString(v))) planted.push_back(std::move(v));
      }
    }
  }
  const int valid_count = static_cast<int>(valid.size());
  progress.set_variants_planned(std::min(max_variants, valid_count) + planted_count);
  auto strategy = MakeSearchStrategy(item.spec.strategy(), space, std::move(valid), seed);

  // Baseline first: its time bounds every variant's run time. A vendor
  // library call is made by the worker, with the compiled pass (if any)
  // that follows it.
  const kernels::Baseline baseline = template_.BaselineFor(item.key);
  if (!baseline.vendor_library.empty()) {
    if (auto why = backend_.VendorLibraryMissing(baseline.vendor_library)) {
      return fail("baseline " + baseline.name + ": " + *why);
    }
  } else if (!baseline.source) {
    return fail("baseline " + baseline.name + " has no source to compile");
  }
  runtime::CompileLimits compile_limits{limits_.compile_timeout_seconds, limits_.compile_niceness};
  std::optional<runtime::CompileResult> base_compiled;
  if (baseline.source) {
    base_compiled =
        AwaitCompile(pool_.Submit(backend_, *baseline.source, device_, compile_limits), cancel);
    if (!base_compiled) return cancelled();
    if (!base_compiled->ok) return fail("baseline failed to compile: " + base_compiled->log);
  }

  worker::v1::BenchRequest request;
  request.set_backend(std::string(backend_.name()));
  *request.mutable_key() = item.key;
  request.set_seed(seed);
  request.mutable_protocol()->set_warmup(limits_.warmup_runs);
  request.mutable_protocol()->set_min_repetitions(limits_.min_repetitions);
  request.mutable_protocol()->set_max_repetitions(limits_.max_repetitions);
  request.mutable_protocol()->set_min_seconds(limits_.min_timing_seconds);
  request.mutable_protocol()->set_max_throttle_retries(limits_.max_throttle_retries);
  request.set_tolerance(tolerance);
  request.mutable_reference()->set_max_full_flops(limits_.reference_full_max_flops);
  request.mutable_reference()->set_sample_rows(limits_.reference_sample_rows);
  request.mutable_reference()->set_threads(limits_.reference_threads);

  request.set_vendor_baseline(baseline.vendor_library);
  if (baseline.source) {
    request.set_artifact_path(base_compiled->artifact_path);
    request.set_entry(baseline.source->entry);
    *request.mutable_launch() = baseline.source->launch;
  }
  const auto base_started = Clock::now();
  const auto base_result = worker_.Run(
      request,
      std::chrono::milliseconds(static_cast<int64_t>(limits_.run_limit_max_seconds * 1000)),
      &cancel);
  const double base_wall = std::chrono::duration<double>(Clock::now() - base_started).count();
  if (base_result.outcome == BenchmarkWorker::Outcome::kCancelled) return cancelled();
  if (base_result.outcome != BenchmarkWorker::Outcome::kOk) {
    return fail("baseline " + baseline.name + " " + OutcomeName(base_result.outcome) + ": " +
                base_result.error);
  }
  request.clear_vendor_baseline();
  const v1::Timing base_timing = base_result.response.timing();
  progress.set_baseline_us(base_timing.median_us());
  const auto run_limit = std::chrono::milliseconds(static_cast<int64_t>(
      1000 * std::clamp(limits_.run_limit_factor * base_wall, limits_.run_limit_min_seconds,
                        limits_.run_limit_max_seconds)));

  // Keep the compile pool busy ahead of the worker.
  std::deque<Pending> pipeline;
  auto refill = [&] {
    while (pipeline.size() < 3) {
      std::optional<kernels::Variant> next;
      if (!planted.empty()) {
        next = planted.front();
        planted.pop_front();
      } else if (attempts < max_variants + planted_count) {
        while ((next = strategy->Next()) && tried.contains(kernels::VariantString(*next))) {
        }
      }
      if (!next) return;
      tried.insert(kernels::VariantString(*next));
      kernels::KernelSource source = template_.Source(item.key, *next);
      if (item.known_failures.contains(kernels::VariantString(*next))) {
        // Costs nothing, so it does not count against the budget.
        pipeline.push_back(
            {.variant = std::move(*next), .source = std::move(source), .known_failure = true});
        continue;
      }
      ++attempts;
      auto future = pool_.Submit(backend_, source, device_, compile_limits);
      pipeline.push_back({.variant = std::move(*next),
                          .source = std::move(source),
                          .compiled = std::move(future)});
    }
  };

  std::string stop_reason;
  refill();
  while (!pipeline.empty()) {
    if (cancel.load()) return cancelled();
    if (std::chrono::duration<double>(Clock::now() - started).count() > max_seconds) {
      stop_reason = "time budget of " + std::to_string(max_seconds) + " s reached";
      break;
    }
    Pending p = std::move(pipeline.front());
    pipeline.pop_front();
    if (backend_.RunsOnCompilerCores()) {
      // Compile the next batch only while nothing is being timed.
      for (const auto& ahead : pipeline) {
        if (!ahead.known_failure && !AwaitCompile(ahead.compiled, cancel)) return cancelled();
      }
    } else {
      refill();
    }

    v1::Trial trial;
    trial.set_job_id(item.job_id);
    trial.set_item_index(item.item_index);
    trial.mutable_params()->insert(p.variant.begin(), p.variant.end());
    trial.set_source_hash(runtime::ContentHash(p.source.code));
    if (p.known_failure) {
      trial.set_status(v1::TRIAL_SKIPPED_KNOWN_FAILURE);
      trial.set_error(
          "hung, crashed or was wrong in an earlier job on this device class and "
          "toolchain; not run again");
      *trial.mutable_finished_at() = TimeUtil::GetCurrentTime();
      observer.OnTrial(trial);
      strategy->Observe(p.variant, {});
      progress.set_failed(progress.failed() + 1);
      observer.OnProgress(progress, v1::JobEvent::KIND_VARIANT_FAILED, &trial);
      if (pipeline.empty()) refill();
      continue;
    }

    auto compiled = AwaitCompile(p.compiled, cancel);
    if (!compiled) return cancelled();
    trial.set_compile_seconds(compiled->seconds);
    trial.set_compile_cache_hit(compiled->cache_hit);
    auto* report = trial.mutable_compile_report();
    report->set_registers(compiled->resources.registers);
    report->set_shared_memory_bytes(compiled->resources.shared_memory_bytes);
    report->set_spill_bytes(compiled->resources.spill_bytes);
    report->set_stack_bytes(compiled->resources.stack_bytes);
    report->set_log(Truncate(compiled->log));
    for (const auto& option : p.source.compile_options) report->add_options(option);
    observer.OnKernel(trial.source_hash(), p.source);
    if (!compiled->ok) {
      trial.set_status(compiled->timed_out ? v1::TRIAL_TIMEOUT : v1::TRIAL_COMPILE_ERROR);
      trial.set_error(Truncate(compiled->log));
    } else if (limits_.reject_spills && compiled->resources.spill_bytes > 0) {
      trial.set_status(v1::TRIAL_REJECTED);
      trial.set_error("spills " + std::to_string(compiled->resources.spill_bytes) + " bytes with " +
                      std::to_string(compiled->resources.registers) + " registers");
    } else {
      progress.set_compiled(progress.compiled() + 1);
      observer.OnProgress(progress, v1::JobEvent::KIND_VARIANT_COMPILED, &trial);
      request.set_artifact_path(compiled->artifact_path);
      request.set_entry(p.source.entry);
      *request.mutable_launch() = p.source.launch;
      request.mutable_params()->clear();
      request.mutable_params()->insert(p.variant.begin(), p.variant.end());
      const auto result = worker_.Run(request, run_limit, &cancel);
      if (result.outcome == BenchmarkWorker::Outcome::kCancelled) return cancelled();
      trial.set_status(StatusOf(result.outcome));
      trial.set_rel_error(result.response.rel_error());
      *trial.mutable_validation() = result.response.validation();
      if (result.outcome == BenchmarkWorker::Outcome::kOk) {
        *trial.mutable_timing() = result.response.timing();
        if (trial.timing().median_us() >= base_timing.median_us()) {
          trial.set_status(v1::TRIAL_SLOWER);
        }
      } else {
        trial.set_error(Truncate(result.error));
      }
    }
    *trial.mutable_finished_at() = TimeUtil::GetCurrentTime();
    observer.OnTrial(trial);
    if (compiled->ok && IsRunFailure(trial.status())) observer.OnRunFailure(trial);
    if (pipeline.empty()) refill();

    const bool ok = !IsFailure(trial.status());
    int64_t threads_per_block = 1;
    for (int64_t b : p.source.launch.block()) threads_per_block *= b;
    strategy->Observe(
        p.variant,
        {.median_us = ok ? std::optional<double>(trial.timing().median_us()) : std::nullopt,
         .resources = compiled->resources,
         .threads_per_block = p.source.launch.block_size() > 0 ? threads_per_block : 0});
    if (ok) {
      progress.set_benchmarked(progress.benchmarked() + 1);
      timed.push_back(trial);
    } else {
      progress.set_failed(progress.failed() + 1);
    }
    observer.OnProgress(
        progress, ok ? v1::JobEvent::KIND_VARIANT_BENCHMARKED : v1::JobEvent::KIND_VARIANT_FAILED,
        &trial);
    if (ok && (!best || trial.timing().median_us() < best->timing().median_us())) {
      best = trial;
      progress.set_best_us(trial.timing().median_us());
      progress.mutable_best_params()->clear();
      progress.mutable_best_params()->insert(trial.params().begin(), trial.params().end());
      observer.OnProgress(progress, v1::JobEvent::KIND_BEST_SO_FAR, &trial);
    }
  }
  if (!stop_reason.empty())
    spdlog::info("job {} item {}: {}", item.job_id, item.item_index, stop_reason);

  // The decision: the best and second-best variants and the baseline are
  // re-timed interleaved, so that drift (clocks, heat, neighbours) hits all
  // alike; the faster variant is served only when it beats the baseline by
  // more than min_speedup and more than the noise of those re-timings.
  std::sort(timed.begin(), timed.end(), [](const v1::Trial& a, const v1::Trial& b) {
    return a.timing().median_us() < b.timing().median_us();
  });
  std::vector<Contender> contenders;
  for (const auto& t : timed) {
    if (contenders.size() == 2) break;
    const kernels::Variant params(t.params().begin(), t.params().end());
    Contender c{.trial = &t, .source = template_.Source(item.key, params)};
    auto compiled = AwaitCompile(pool_.Submit(backend_, c.source, device_, compile_limits), cancel);
    if (!compiled) return cancelled();
    if (!compiled->ok) continue;
    c.artifact_path = compiled->artifact_path;
    contenders.push_back(std::move(c));
  }
  v1::Decision decision;
  decision.set_rounds(limits_.decision_rounds);
  v1::Timing decided_baseline = base_timing;
  const Contender* chosen = nullptr;
  if (contenders.empty()) {
    decision.set_reason("no variant passed validation and timing");
  } else {
    contenders.push_back({.source = baseline.source.value_or(kernels::KernelSource{}),
                          .artifact_path = base_compiled ? base_compiled->artifact_path : "",
                          .vendor_baseline = baseline.vendor_library});
    if (!Retime(contenders, request, run_limit, cancel)) return cancelled();
    const Contender& base_rounds = contenders.back();
    decided_baseline = base_rounds.error.empty() ? base_rounds.timing() : base_timing;
    *decision.mutable_baseline() = decided_baseline;
    *decision.mutable_winner() = contenders[0].timing();
    if (contenders.size() == 3) {
      *decision.mutable_runner_up() = contenders[1].timing();
      decision.mutable_runner_up_params()->insert(contenders[1].trial->params().begin(),
                                                  contenders[1].trial->params().end());
    }
    for (size_t i = 0; i + 1 < contenders.size(); ++i) {
      const Contender& c = contenders[i];
      if (!c.error.empty() || c.round_medians_s.empty()) continue;
      if (!chosen || c.timing().median_us() < chosen->timing().median_us()) chosen = &c;
    }
    if (!base_rounds.error.empty()) {
      decision.set_reason("baseline " + base_rounds.error);
      chosen = nullptr;
    } else if (!chosen) {
      decision.set_reason("every variant failed its re-timing: " + contenders[0].error);
    }
  }
  bool tuned = false;
  if (chosen) {
    // Paired per round: the chosen variant's time over the baseline's, taken
    // back to back, so that drift between rounds cancels out.
    const Contender& base_rounds = contenders.back();
    std::vector<double> ratios;
    for (size_t r = 0; r < chosen->round_medians_s.size(); ++r) {
      ratios.push_back(chosen->round_medians_s[r] / base_rounds.round_medians_s[r]);
    }
    const DecisionMargin margin = JudgeMargin(ratios, limits_.min_speedup, limits_.noise_factor);
    decision.set_noise(margin.noise);
    decision.set_required_margin(margin.required);
    decision.set_measured_margin(margin.measured);
    tuned = margin.tuned;
    decision.set_reason(std::string(tuned ? "beats " : "does not beat ") + baseline.name + " by " +
                        Percent(margin.measured) + " (needed more than " +
                        Percent(margin.required) + ": min_speedup " +
                        std::to_string(limits_.min_speedup) + ", noise " + Percent(margin.noise) +
                        " x " + std::to_string(limits_.noise_factor) + ")");
  }

  v1::Record record;
  *record.mutable_key() = item.key;
  record.set_device_class(device_.fingerprint.device_class());
  *record.mutable_device() = device_.fingerprint;
  *record.mutable_toolchain() = device_.toolchain;
  *record.mutable_baseline() = decided_baseline;
  record.set_baseline_name(baseline.name);
  *record.mutable_measured_at() = TimeUtil::GetCurrentTime();
  record.set_job_id(item.job_id);
  record.set_daemon(HostName());
  *record.mutable_decision() = decision;
  if (chosen) {
    const v1::Trial& best_trial = *chosen->trial;
    auto* config = record.mutable_config();
    config->set_kernel_name(std::string(template_.name()));
    config->set_source_hash(best_trial.source_hash());
    config->mutable_params()->insert(best_trial.params().begin(), best_trial.params().end());
    *config->mutable_launch() = chosen->source.launch;
    *record.mutable_tuned() = chosen->timing();
    record.set_max_rel_error(best_trial.rel_error());
    *record.mutable_validation() = best_trial.validation();
    record.set_speedup(decided_baseline.median_us() / record.tuned().median_us());
    progress.set_best_us(record.tuned().median_us());
    progress.mutable_best_params()->clear();
    progress.mutable_best_params()->insert(best_trial.params().begin(), best_trial.params().end());
  }
  progress.set_baseline_us(decided_baseline.median_us());
  record.set_winner(tuned ? v1::WINNER_TUNED : v1::WINNER_VENDOR);
  progress.set_winner(record.winner());
  progress.set_state(v1::JOB_SUCCEEDED);
  out.record = record;
  observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
  return out;
}

}  // namespace tiletune::tuner
