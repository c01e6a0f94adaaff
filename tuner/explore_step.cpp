#include "tuner/explore_step.h"

#include <algorithm>
#include <chrono>

#include <google/protobuf/util/time_util.h>
#include <spdlog/spdlog.h>

#include "runtime/content_hash.h"
#include "tuner/roofline.h"

namespace tiletune::tuner {
namespace {

using google::protobuf::util::TimeUtil;

// A previous trial's variant as the strategy proposes it: its params and its
// template's index in the key's space. Trials stored before spaces spanned
// templates name none: they are the first template's.
kernels::Variant StrategyVariant(const kernels::KeySpace& space, v1::Trial& trial) {
  if (trial.kernel_name().empty()) trial.set_kernel_name(std::string(space.first().name()));
  kernels::Variant v(trial.params().begin(), trial.params().end());
  v[std::string(kernels::kTemplateParameter)] = space.IndexOf(trial.kernel_name()).value_or(-1);
  return v;
}

// A variant's entry among the known failures.
std::pair<std::string, std::string> FailureKey(const kernels::KeySpace& space,
                                               const kernels::Variant& variant) {
  return {std::string(space.TemplateOf(variant).name()),
          kernels::VariantString(kernels::OwnParameters(variant))};
}

bool IsFailure(v1::TrialStatus status) {
  return status != v1::TRIAL_OK && status != v1::TRIAL_SLOWER;
}

// Outcomes in the worker that say the variant itself is broken.
bool IsRunFailure(v1::TrialStatus status) {
  return status == v1::TRIAL_TIMEOUT || status == v1::TRIAL_CRASH ||
         status == v1::TRIAL_WRONG_RESULT;
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

// The hanging, the crashing and the wrong variant of plant_faults.
constexpr int kPlantedFaults[] = {1, 2, 3};

int MaxVariants(const v1::SearchBudget& budget, const TuningLimits& limits) {
  return std::min(budget.max_variants() > 0 ? budget.max_variants() : limits.default_max_variants,
                  limits.max_variants_cap);
}

double MaxSeconds(const v1::SearchBudget& budget, const TuningLimits& limits) {
  return budget.max_seconds() > 0 ? budget.max_seconds() : limits.default_max_seconds;
}

}  // namespace

int PlannedVariants(const v1::SearchBudget& budget, const TuningLimits& limits,
                    size_t valid_variants) {
  if (valid_variants == 0) return 0;
  const int planted = limits.plant_faults ? static_cast<int>(std::size(kPlantedFaults)) : 0;
  return static_cast<int>(std::min<size_t>(MaxVariants(budget, limits), valid_variants)) + planted;
}

VariantExploration::VariantExploration(TuningRun& run, const std::vector<v1::Trial>& previous)
    : run_(run),
      max_variants_(MaxVariants(run.item.spec.budget(), run.session.limits)),
      max_seconds_(MaxSeconds(run.item.spec.budget(), run.session.limits)),
      request_(run.request) {
  const kernels::KeySpace& space = run_.session.space;
  v1::JobItemProgress& progress = run_.progress;
  for (v1::Trial t : previous) {
    tried_.insert(kernels::VariantString(StrategyVariant(space, t)));
    if (t.status() != v1::TRIAL_SKIPPED_KNOWN_FAILURE) ++attempts_;
    if (t.status() != v1::TRIAL_COMPILE_ERROR) progress.set_compiled(progress.compiled() + 1);
    if (IsFailure(t.status())) {
      progress.set_failed(progress.failed() + 1);
    } else {
      progress.set_benchmarked(progress.benchmarked() + 1);
      timed_.push_back(t);
      if (!best_ || t.timing().median_us() < best_->timing().median_us()) best_ = t;
    }
  }

  // The space's valid variants are computed once: for the plan's size, the
  // planted faults and the strategy.
  std::vector<kernels::Variant> valid = space.ValidVariants();
  if (run_.session.limits.plant_faults && !valid.empty()) {
    for (int fault : kPlantedFaults) {
      kernels::Variant v = valid.front();
      v[std::string(kernels::kPlantedFault)] = fault;
      if (!run_.item.known_failures.contains(FailureKey(space, v))) ++planted_count_;
      if (!tried_.contains(kernels::VariantString(v))) planted_.push_back(std::move(v));
    }
  }
  // Planted faults remembered as failures are skipped, which counts them
  // done: they stay in the plan.
  progress.set_variants_planned(
      PlannedVariants(run_.item.spec.budget(), run_.session.limits, valid.size()));
  strategy_ = MakeSearchStrategy(run_.item.spec.strategy(), space, std::move(valid), run_.seed);
}

void VariantExploration::Refill() {
  while (pipeline_.size() < 3) {
    std::optional<kernels::Variant> next;
    if (!planted_.empty()) {
      next = planted_.front();
      planted_.pop_front();
    } else if (attempts_ < max_variants_ + planted_count_) {
      while ((next = strategy_->Next()) && tried_.contains(kernels::VariantString(*next))) {
      }
    }
    if (!next) return;
    tried_.insert(kernels::VariantString(*next));
    kernels::KernelSource source =
        run_.session.space.TemplateOf(*next).Source(run_.item.key, kernels::OwnParameters(*next));
    if (run_.item.known_failures.contains(FailureKey(run_.session.space, *next))) {
      // Costs nothing, so it does not count against the budget.
      pipeline_.push_back(
          {.variant = std::move(*next), .source = std::move(source), .known_failure = true});
      continue;
    }
    ++attempts_;
    auto future = run_.session.pool.Submit(run_.session.backend, source, run_.session.device,
                                           run_.compile_limits);
    pipeline_.push_back(
        {.variant = std::move(*next), .source = std::move(source), .compiled = std::move(future)});
  }
}

std::optional<std::vector<v1::Trial>> VariantExploration::Explore(const TimedBaseline& baseline) {
  Refill();
  while (!pipeline_.empty()) {
    if (run_.cancel.load()) return run_.Cancel();
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - run_.started).count() >
        max_seconds_) {
      spdlog::info("job {} item {}: time budget of {} s reached", run_.item.job_id,
                   run_.item.item_index, std::to_string(max_seconds_));
      break;
    }
    Pending p = std::move(pipeline_.front());
    pipeline_.pop_front();
    if (run_.session.backend.RunsOnCompilerCores()) {
      // Compile the next batch only while nothing is being timed.
      for (const auto& ahead : pipeline_) {
        if (!ahead.known_failure && !AwaitCompile(ahead.compiled, run_.cancel)) {
          return run_.Cancel();
        }
      }
    } else {
      Refill();
    }

    if (p.known_failure) {
      SkipKnownFailure(p);
      if (pipeline_.empty()) Refill();
      continue;
    }
    const auto compiled = AwaitCompile(p.compiled, run_.cancel);
    if (!compiled) return run_.Cancel();
    v1::Trial trial = NewTrial(p);
    if (!Measure(p, *compiled, baseline, trial)) return run_.Cancel();
    *trial.mutable_finished_at() = TimeUtil::GetCurrentTime();
    run_.observer.OnTrial(trial);
    if (compiled->ok && IsRunFailure(trial.status())) run_.observer.OnRunFailure(trial);
    // Refilled before the strategy observes this trial: a seed's plan
    // depends on that order.
    if (pipeline_.empty()) Refill();
    Learn(p, compiled->resources, trial);
  }
  return std::move(timed_);
}

v1::Trial VariantExploration::NewTrial(const Pending& pending) const {
  v1::Trial trial;
  trial.set_job_id(run_.item.job_id);
  trial.set_item_index(run_.item.item_index);
  const kernels::Variant own = kernels::OwnParameters(pending.variant);
  trial.mutable_params()->insert(own.begin(), own.end());
  trial.set_kernel_name(std::string(run_.session.space.TemplateOf(pending.variant).name()));
  trial.set_source_hash(runtime::ContentHash(pending.source.code));
  return trial;
}

void VariantExploration::SkipKnownFailure(const Pending& pending) {
  v1::Trial trial = NewTrial(pending);
  trial.set_status(v1::TRIAL_SKIPPED_KNOWN_FAILURE);
  trial.set_error(
      "hung, crashed or was wrong in an earlier job on this device class and "
      "toolchain; not run again");
  *trial.mutable_finished_at() = TimeUtil::GetCurrentTime();
  run_.observer.OnTrial(trial);
  strategy_->Observe(pending.variant, {});
  v1::JobItemProgress& progress = run_.progress;
  progress.set_failed(progress.failed() + 1);
  // A skip costs no budget, so the strategy draws another variant in its
  // place: the plan grows by one once the skips outnumber what it left.
  progress.set_variants_planned(
      std::max(progress.variants_planned(), progress.benchmarked() + progress.failed()));
  run_.observer.OnProgress(progress, v1::JobEvent::KIND_VARIANT_FAILED, &trial);
}

bool VariantExploration::Measure(const Pending& pending, const runtime::CompileResult& compiled,
                                 const TimedBaseline& baseline, v1::Trial& trial) {
  trial.set_compile_seconds(compiled.seconds);
  trial.set_compile_cache_hit(compiled.cache_hit);
  auto* report = trial.mutable_compile_report();
  report->set_registers(compiled.resources.registers);
  report->set_shared_memory_bytes(compiled.resources.shared_memory_bytes);
  report->set_spill_bytes(compiled.resources.spill_bytes);
  report->set_stack_bytes(compiled.resources.stack_bytes);
  report->set_log(TruncateError(compiled.log));
  for (const auto& option : pending.source.compile_options) report->add_options(option);
  run_.observer.OnKernel(trial.source_hash(), pending.source);
  if (!compiled.ok) {
    trial.set_status(compiled.timed_out ? v1::TRIAL_TIMEOUT : v1::TRIAL_COMPILE_ERROR);
    trial.set_error(TruncateError(compiled.log));
    return true;
  }
  if (run_.session.limits.reject_spills && compiled.resources.spill_bytes > 0) {
    trial.set_status(v1::TRIAL_REJECTED);
    trial.set_error("spills " + std::to_string(compiled.resources.spill_bytes) + " bytes with " +
                    std::to_string(compiled.resources.registers) + " registers");
    return true;
  }
  run_.progress.set_compiled(run_.progress.compiled() + 1);
  run_.observer.OnProgress(run_.progress, v1::JobEvent::KIND_VARIANT_COMPILED, &trial);
  request_.set_artifact_path(compiled.artifact_path);
  request_.set_entry(pending.source.entry);
  *request_.mutable_launch() = pending.source.launch;
  request_.mutable_params()->clear();
  request_.mutable_params()->insert(trial.params().begin(), trial.params().end());
  const auto result = run_.session.worker.Run(request_, baseline.run_limit, &run_.cancel);
  if (result.outcome == BenchmarkWorker::Outcome::kCancelled) return false;
  trial.set_status(StatusOf(result.outcome));
  trial.set_rel_error(result.response.rel_error());
  *trial.mutable_validation() = result.response.validation();
  if (result.outcome == BenchmarkWorker::Outcome::kOk) {
    *trial.mutable_timing() = result.response.timing();
    *trial.mutable_roofline() =
        RooflineOf(run_.item.key, run_.session.device.fingerprint, trial.timing().median_us());
    if (trial.timing().median_us() >= baseline.timing.median_us()) {
      trial.set_status(v1::TRIAL_SLOWER);
    }
  } else {
    trial.set_error(TruncateError(result.error));
  }
  return true;
}

void VariantExploration::Learn(const Pending& pending, const runtime::ResourceReport& resources,
                               const v1::Trial& trial) {
  const bool ok = !IsFailure(trial.status());
  int64_t threads_per_block = 1;
  for (int64_t b : pending.source.launch.block()) threads_per_block *= b;
  strategy_->Observe(
      pending.variant,
      {.median_us = ok ? std::optional<double>(trial.timing().median_us()) : std::nullopt,
       .resources = resources,
       .threads_per_block = pending.source.launch.block_size() > 0 ? threads_per_block : 0});
  v1::JobItemProgress& progress = run_.progress;
  if (ok) {
    progress.set_benchmarked(progress.benchmarked() + 1);
    timed_.push_back(trial);
  } else {
    progress.set_failed(progress.failed() + 1);
  }
  run_.observer.OnProgress(
      progress, ok ? v1::JobEvent::KIND_VARIANT_BENCHMARKED : v1::JobEvent::KIND_VARIANT_FAILED,
      &trial);
  if (ok && (!best_ || trial.timing().median_us() < best_->timing().median_us())) {
    best_ = trial;
    progress.set_best_us(trial.timing().median_us());
    progress.mutable_best_params()->clear();
    progress.mutable_best_params()->insert(trial.params().begin(), trial.params().end());
    run_.observer.OnProgress(progress, v1::JobEvent::KIND_BEST_SO_FAR, &trial);
  }
}

}  // namespace tiletune::tuner
