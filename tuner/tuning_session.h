#pragma once

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernels/core/key_space.h"
#include "runtime/backend.h"
#include "tiletune/v1/jobs.pb.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/benchmark_worker.h"
#include "tuner/compile_pool.h"

namespace tiletune::tuner {

// The most baseline_algorithms may ask for: each is a worker run, and the
// worker holds the heuristic's answer for as many.
inline constexpr int kMaxBaselineAlgorithms = 256;

// The rules one tuning run follows. Every limit is a named daemon setting.
struct TuningLimits {
  int default_max_variants = 24;
  double default_max_seconds = 120;
  int max_variants_cap = 4096;
  // Most seconds any job may ask for per kernel: a day, so that a typo of a
  // budget cannot hold a device for years.
  double max_seconds_cap = 86400;
  double compile_timeout_seconds = 60;
  // Compiler processes run this much nicer than the daemon, so that lookups
  // keep their latency while a job compiles on every core.
  int compile_niceness = 10;
  // The scheduling policy of the compilers and benchmark workers of tuning
  // runs: kIdle lets the daemon's threads (lookups) take a core from them at
  // once, at the price of tuning only on what lookups leave.
  runtime::SchedPolicy sched_policy = runtime::SchedPolicy::kOther;
  // A variant may take this many times the baseline's benchmark wall time,
  // but never less than run_limit_min nor more than run_limit_max seconds.
  double run_limit_factor = 20;
  double run_limit_min_seconds = 2;
  double run_limit_max_seconds = 60;
  double tolerance_f32 = 1e-4;
  // f32 keys that allow tf32: inputs keep 10 mantissa bits, ~3e-4 typical.
  double tolerance_tf32 = 2e-3;
  double tolerance_half = 2e-2;
  // A tuned kernel is served only when it beats the baseline by more than
  // this factor (noise margin); otherwise the record says VENDOR.
  double min_speedup = 1.02;
  // Serve a tuned kernel even where its baseline does not stand for what
  // users run (kernels::Baseline.vendor_gap: attention on GPUs, GEMM on
  // AMD). Off: such keys stay VENDOR, since the kernel may lose to the
  // user's own call. For operators who measured their own stack, and for
  // benchmarks that time our kernels against it.
  bool serve_over_vendor_gap = false;
  // A vendor baseline (cuBLASLt) tries this many of its heuristic's
  // algorithms, each validated and timed; the fastest correct one is the
  // baseline. 1: the heuristic's first choice alone.
  int baseline_algorithms = 8;
  // A variant whose compiler report shows register spills is rejected
  // before it is timed (spills are local-memory traffic on GPUs).
  bool reject_spills = true;
  // Measurement protocol handed to the worker.
  int warmup_runs = 2;
  int min_repetitions = 5;
  int max_repetitions = 200;
  double min_timing_seconds = 0.02;
  // A measurement taken while the device throttled is repeated this often.
  int max_throttle_retries = 3;
  // Before the record is stored, the winner, the runner-up and the baseline
  // are re-timed in this many interleaved rounds (A B C A B C ...).
  int decision_rounds = 5;
  // The winner must beat the baseline by more than this many times the
  // measured noise (p75 - p25 of its per-round time ratio to the baseline),
  // and by min_speedup.
  double noise_factor = 1;
  // The worker compares outputs with the whole float64 reference up to this
  // estimate of its cost (~1-5 s on one core; a 4096^3 GEMM is ~1.4e11),
  // above it only sampled whole rows: reference_sample_rows drawn at
  // random plus the first, last and partial-tile rows. Every element is
  // still checked to be written and finite.
  double reference_full_max_flops = 1e10;
  int reference_sample_rows = 64;
  // Threads the worker computes the reference on; 0: every hardware thread.
  int reference_threads = 0;
  // Testing aid: add a hanging, a crashing and a wrong variant to every item.
  bool plant_faults = false;
};

// The largest relative error a kernel of `key` may have to count as correct.
double ToleranceFor(const v1::KernelKey& key, const TuningLimits& limits);

// One job item to tune.
struct TuningItem {
  std::string job_id;
  int item_index = 0;
  v1::KernelKey key;  // normalized
  v1::JobSpec spec;
  // Variants (kernel template name, kernels::VariantString) that hung,
  // crashed or were wrong on this device class and toolchain in earlier
  // jobs: never run again.
  std::set<std::pair<std::string, std::string>> known_failures;
};

// Receives what a session does as it happens; the daemon stores trials and
// progress and forwards them to WatchJob streams.
class TuningObserver {
 public:
  virtual ~TuningObserver() = default;
  virtual void OnTrial(const v1::Trial& trial) = 0;
  // A variant hung, crashed or gave a wrong result in the worker: remember
  // it so that later jobs skip it.
  virtual void OnRunFailure(const v1::Trial& trial) = 0;
  // The source of a variant about to be tried, so it can be stored by hash.
  virtual void OnKernel(const std::string& source_hash, const kernels::KernelSource& source) = 0;
  virtual void OnProgress(const v1::JobItemProgress& progress, v1::JobEvent::Kind kind,
                          const v1::Trial* trial) = 0;
};

struct TuningOutcome {
  v1::JobItemProgress progress;  // final state: SUCCEEDED, FAILED or CANCELLED
  std::optional<v1::Record> record;
};

// What a TuningSession tunes every item with.
struct SessionParts {
  const kernels::KeySpace& space;  // the item's key on the backend
  runtime::Backend& backend;
  const runtime::DeviceInfo& device;
  BenchmarkWorker& worker;
  CompilePool& pool;
  const TuningLimits& limits;
};

// Tunes one kernel key on one device: baseline first, then variants of every
// template serving the key (the key's space) chosen by the job's strategy, compiled in the pool
// while the worker validates and times them one at a time. At the end the best and second-best
// correct variants and the baseline are re-timed interleaved, and the faster variant becomes the
// record only if it beats the baseline by more than the noise; else the record says VENDOR, with
// the numbers that decided it.
class TuningSession {
 public:
  // `space` is the KeySpace of every item's key on `backend`.
  TuningSession(const kernels::KeySpace& space, runtime::Backend& backend,
                const runtime::DeviceInfo& device, BenchmarkWorker& worker, CompilePool& pool,
                const TuningLimits& limits);

  // `previous` are trials this item already ran before a restart: they count
  // against the budget and are not run again.
  TuningOutcome Run(const TuningItem& item, const std::vector<v1::Trial>& previous,
                    TuningObserver& observer, const std::atomic<bool>& cancel);

 private:
  const SessionParts parts_;
};

}  // namespace tiletune::tuner
