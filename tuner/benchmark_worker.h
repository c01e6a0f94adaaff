#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "runtime/subprocess.h"
#include "tiletune/worker/v1/worker.pb.h"

namespace tiletune::tuner {

// Parent side of one benchmark worker process (tiletune-worker) pinned to one
// device. The worker loads a compiled variant, validates it against the
// float64 reference and times it; a hang or crash ends only the worker, which
// is started again for the next request.
class BenchmarkWorker {
 public:
  struct Options {
    std::string worker_binary;               // path to tiletune-worker
    std::map<std::string, std::string> env;  // device pinning etc.
    runtime::CpuPriority priority;
  };

  enum class Outcome { kOk, kTimeout, kCrash, kWrongResult, kLoadError, kRunError, kCancelled };

  struct Result {
    Outcome outcome = Outcome::kRunError;
    worker::v1::BenchResponse response;  // filled when the worker answered
    std::string error;                   // human-readable reason when not kOk
  };

  explicit BenchmarkWorker(Options options);
  ~BenchmarkWorker();
  BenchmarkWorker(const BenchmarkWorker&) = delete;
  BenchmarkWorker& operator=(const BenchmarkWorker&) = delete;

  // Runs one request. Past `limit` the worker is killed (kTimeout); if it
  // dies (kCrash) or `cancel` turns true (kCancelled, within ~100 ms) the
  // worker is killed and restarted lazily on the next call.
  Result Run(const worker::v1::BenchRequest& request, std::chrono::milliseconds limit,
             const std::atomic<bool>* cancel = nullptr);

  // Times the worker was (re)started after a timeout or crash.
  int restarts() const { return restarts_; }
  // Ends the worker process, if one is running.
  void Stop();

 private:
  class Process;
  Options options_;
  std::unique_ptr<Process> process_;
  int restarts_ = 0;
};

const char* OutcomeName(BenchmarkWorker::Outcome outcome);

}  // namespace tiletune::tuner
