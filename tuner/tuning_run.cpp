#include "tuner/tuning_run.h"

#include <utility>

namespace tiletune::tuner {
namespace {

constexpr size_t kMaxErrorText = 4096;

}  // namespace

uint64_t ItemSeed(const TuningItem& item) {
  return (item.spec.seed() ? item.spec.seed() : 0x7ee7u) + item.item_index;
}

worker::v1::BenchRequest SharedBenchRequest(const runtime::Backend& backend,
                                            const TuningLimits& limits, const TuningItem& item,
                                            uint64_t seed) {
  worker::v1::BenchRequest request;
  request.set_backend(std::string(backend.name()));
  *request.mutable_key() = item.key;
  request.set_seed(seed);
  request.mutable_protocol()->set_warmup(limits.warmup_runs);
  request.mutable_protocol()->set_min_repetitions(limits.min_repetitions);
  request.mutable_protocol()->set_max_repetitions(limits.max_repetitions);
  request.mutable_protocol()->set_min_seconds(limits.min_timing_seconds);
  request.mutable_protocol()->set_max_throttle_retries(limits.max_throttle_retries);
  request.set_tolerance(ToleranceFor(item.key, limits));
  request.mutable_reference()->set_max_full_flops(limits.reference_full_max_flops);
  request.mutable_reference()->set_sample_rows(limits.reference_sample_rows);
  request.mutable_reference()->set_threads(limits.reference_threads);
  return request;
}

v1::JobItemProgress RunningProgress(const TuningItem& item) {
  v1::JobItemProgress progress;
  progress.set_index(item.item_index);
  *progress.mutable_key() = item.key;
  progress.set_state(v1::JOB_RUNNING);
  return progress;
}

std::optional<runtime::CompileResult> TuningRun::Compile(const kernels::KernelSource& source) {
  return AwaitCompile(session.pool.Submit(session.backend, source, session.device, compile_limits),
                      cancel);
}

std::nullopt_t TuningRun::Fail(std::string error) {
  progress.set_state(v1::JOB_FAILED);
  progress.set_error(TruncateError(std::move(error)));
  observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
  return std::nullopt;
}

std::nullopt_t TuningRun::Cancel() {
  progress.set_state(v1::JOB_CANCELLED);
  observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
  return std::nullopt;
}

TuningOutcome TuningRun::Stopped() const {
  return {.progress = progress};
}

TuningOutcome TuningRun::Succeed(v1::Record record) {
  // A record with a config names the fastest re-timed variant, served or not.
  if (record.has_config()) {
    progress.set_best_us(record.tuned().median_us());
    *progress.mutable_best_params() = record.config().params();
  }
  progress.set_baseline_us(record.baseline().median_us());
  progress.set_winner(record.winner());
  progress.set_state(v1::JOB_SUCCEEDED);
  observer.OnProgress(progress, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
  return {.progress = progress, .record = std::move(record)};
}

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

std::string TruncateError(std::string text) {
  if (text.size() > kMaxErrorText) text.resize(kMaxErrorText);
  return text;
}

}  // namespace tiletune::tuner
