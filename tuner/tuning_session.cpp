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
#include "tuner/search_strategy.h"

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

struct Pending {
  kernels::Variant variant;
  kernels::KernelSource source;
  std::shared_future<runtime::CompileResult> compiled;
};

// Waits for a compile, giving up when the job is cancelled.
std::optional<runtime::CompileResult> AwaitCompile(const Pending& p,
                                                   const std::atomic<bool>& cancel) {
  while (p.compiled.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    if (cancel.load()) return std::nullopt;
  }
  try {
    return p.compiled.get();
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

}  // namespace

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
  auto strategy = MakeSearchStrategy(item.spec.strategy(), space, seed);

  // What earlier runs of this item already did.
  std::set<std::string> tried;
  std::optional<v1::Trial> best;
  int attempts = 0;
  for (const auto& t : previous) {
    tried.insert(TriedKey(t.params()));
    ++attempts;
    if (t.status() != v1::TRIAL_COMPILE_ERROR) progress.set_compiled(progress.compiled() + 1);
    if (IsFailure(t.status())) {
      progress.set_failed(progress.failed() + 1);
    } else {
      progress.set_benchmarked(progress.benchmarked() + 1);
      if (!best || t.timing().median_us() < best->timing().median_us()) best = t;
    }
  }

  std::deque<kernels::Variant> planted;
  if (limits_.plant_faults) {
    const auto valid = space.ValidVariants();
    if (!valid.empty()) {
      for (int fault : {1, 2, 3}) {
        kernels::Variant v = valid.front();
        v["planted_fault"] = fault;
        if (!tried.contains(kernels::VariantString(v))) planted.push_back(std::move(v));
      }
    }
  }
  const int valid_count = static_cast<int>(space.ValidVariants().size());
  const int planted_count = limits_.plant_faults ? 3 : 0;
  progress.set_variants_planned(std::min(max_variants, valid_count) + planted_count);

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
  runtime::CompileLimits compile_limits{limits_.compile_timeout_seconds};
  std::optional<runtime::CompileResult> base_compiled;
  if (baseline.source) {
    Pending base{
        {}, *baseline.source, pool_.Submit(backend_, *baseline.source, device_, compile_limits)};
    base_compiled = AwaitCompile(base, cancel);
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
  request.set_tolerance(tolerance);

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
      ++attempts;
      kernels::KernelSource source = template_.Source(item.key, *next);
      auto future = pool_.Submit(backend_, source, device_, compile_limits);
      pipeline.push_back({std::move(*next), std::move(source), std::move(future)});
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
        if (!AwaitCompile(ahead, cancel)) return cancelled();
      }
    } else {
      refill();
    }

    v1::Trial trial;
    trial.set_job_id(item.job_id);
    trial.set_item_index(item.item_index);
    trial.mutable_params()->insert(p.variant.begin(), p.variant.end());
    trial.set_source_hash(runtime::ContentHash(p.source.code));

    auto compiled = AwaitCompile(p, cancel);
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
    if (pipeline.empty()) refill();

    const bool ok = !IsFailure(trial.status());
    strategy->Observe(p.variant,
                      ok ? std::optional<double>(trial.timing().median_us()) : std::nullopt);
    if (ok) {
      progress.set_benchmarked(progress.benchmarked() + 1);
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

  // The decision: serve the best variant only when it is correct and faster
  // than the baseline by more than the noise margin.
  v1::Record record;
  *record.mutable_key() = item.key;
  record.set_device_class(device_.fingerprint.device_class());
  *record.mutable_device() = device_.fingerprint;
  *record.mutable_toolchain() = device_.toolchain;
  *record.mutable_baseline() = base_timing;
  record.set_baseline_name(baseline.name);
  *record.mutable_measured_at() = TimeUtil::GetCurrentTime();
  record.set_job_id(item.job_id);
  record.set_daemon(HostName());
  if (best) {
    const kernels::Variant params(best->params().begin(), best->params().end());
    auto* config = record.mutable_config();
    config->set_kernel_name(std::string(template_.name()));
    config->set_source_hash(best->source_hash());
    config->mutable_params()->insert(best->params().begin(), best->params().end());
    *config->mutable_launch() = template_.Source(item.key, params).launch;
    *record.mutable_tuned() = best->timing();
    record.set_max_rel_error(best->rel_error());
    record.set_speedup(base_timing.median_us() / best->timing().median_us());
    progress.set_best_us(best->timing().median_us());
  }
  const bool tuned = best && record.speedup() >= limits_.min_speedup;
  record.set_winner(tuned ? v1::WINNER_TUNED : v1::WINNER_VENDOR);
  progress.set_winner(record.winner());
  progress.set_state(v1::JOB_SUCCEEDED);
  out.record = record;
  observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
  return out;
}

}  // namespace tiletune::tuner
