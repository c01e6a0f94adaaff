#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>

#include "kernels/core/kernel_template.h"
#include "runtime/backend.h"
#include "tiletune/v1/jobs.pb.h"
#include "tiletune/v1/records.pb.h"
#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/benchmark_worker.h"
#include "tuner/compile_pool.h"
#include "tuner/tuning_session.h"

namespace tiletune::tuner {

// A fixed seed per item keeps a resumed item on the plan it started with.
uint64_t ItemSeed(const TuningItem& item);
// What every worker request of an item shares (key, seed, protocol,
// tolerance, reference); each step copies it and names the kernel to run.
worker::v1::BenchRequest SharedBenchRequest(const runtime::Backend& backend,
                                            const TuningLimits& limits, const TuningItem& item,
                                            uint64_t seed);
v1::JobItemProgress RunningProgress(const TuningItem& item);

// What the steps of one TuningSession::Run share (baseline -> explore ->
// decide -> record): the session's parts, the item, and its progress.
struct TuningRun {
  // Compiles in the pool and waits; nullopt when the job is cancelled.
  std::optional<runtime::CompileResult> Compile(const kernels::KernelSource& source);

  // End the item FAILED or CANCELLED and tell the observer. They return
  // nullopt so that a step can `return run.Cancel();`; Run then returns
  // Stopped().
  std::nullopt_t Fail(std::string error);
  std::nullopt_t Cancel();
  TuningOutcome Stopped() const;
  // Ends the item SUCCEEDED: the progress takes the record's numbers.
  TuningOutcome Succeed(v1::Record record);

  const SessionParts session;
  const TuningItem& item;
  TuningObserver& observer;
  const std::atomic<bool>& cancel;

  // The rest follows from the above when the run starts.
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  const uint64_t seed = ItemSeed(item);
  const runtime::CompileLimits compile_limits{
      session.limits.compile_timeout_seconds,
      {session.limits.compile_niceness, session.limits.sched_policy}};
  const worker::v1::BenchRequest request =
      SharedBenchRequest(session.backend, session.limits, item, seed);
  v1::JobItemProgress progress = RunningProgress(item);
};

// Waits for a compile, giving up (nullopt) when the job is cancelled.
std::optional<runtime::CompileResult> AwaitCompile(
    const std::shared_future<runtime::CompileResult>& compiled, const std::atomic<bool>& cancel);

// Error text as stored in trials and progress: at most a few KiB.
std::string TruncateError(std::string text);

}  // namespace tiletune::tuner
