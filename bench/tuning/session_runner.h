#pragma once

#include <string_view>

#include <optional>
#include <string>
#include <vector>

#include "kernels/core/key_space.h"
#include "runtime/backend.h"
#include "tiletune/v1/jobs.pb.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/benchmark_worker.h"
#include "tuner/compile_pool.h"
#include "tuner/tuning_session.h"

namespace tiletune::bench {

// What one TuningSession did: its wall time, every trial it ran and the
// record it would store (none when the item failed: `error`).
struct SessionResult {
  double seconds = 0;
  std::vector<v1::Trial> trials;
  std::optional<v1::Record> record;
  std::string error;
};

// The daemon's tuner on the first device of one backend, wired as
// server/job_scheduler.cpp wires it: the backend, the device, one
// tiletune-worker process and a compile pool.
// Fills what a GPU bench's flags left empty: tiletune-rtc and
// tiletune-worker beside the program, the compile cache under the temporary
// folder in `cache_name`. Says why when the worker cannot be run.
std::optional<std::string> ResolveBenchTools(std::string& rtc_binary, std::string& worker_binary,
                                             std::string& cache_dir, std::string_view cache_name);

class TuningSessionRunner {
 public:
  TuningSessionRunner(runtime::Backend& backend, const std::string& worker_binary,
                      int compile_threads);

  // Tunes `key` (normalized) with `strategy` over at most `max_variants`.
  SessionResult Tune(const v1::KernelKey& key, v1::Strategy strategy, int max_variants,
                     const tuner::TuningLimits& limits);

  // Every template serving `key` on this device, with its space: what Tune
  // searches. Empty, with `why`, when none serves it.
  kernels::KeySpace SpaceOf(const v1::KernelKey& key, std::string* why) const;

  const runtime::DeviceInfo& device() const { return device_; }

 private:
  runtime::Backend& backend_;
  runtime::DeviceInfo device_;
  tuner::BenchmarkWorker worker_;
  tuner::CompilePool pool_;
};

}  // namespace tiletune::bench
