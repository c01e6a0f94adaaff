#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/tuning_store.h"
#include "server/daemon_config.h"
#include "server/daemon_metrics.h"
#include "server/database_health.h"
#include "server/device_registry.h"
#include "server/job_event_hub.h"
#include "server/lookup_cache.h"
#include "server/miss_counter.h"
#include "tuner/compile_pool.h"

namespace tiletune::server {

// Runs queued job items, one at a time per device, each in a TuningSession
// with that device's benchmark worker. Items are claimed from the database,
// so queued and interrupted work survives a restart. Lookup misses counted
// in memory are saved every miss_count_flush_seconds and before each claim,
// so that the claim order (priority, then misses) sees them.
class JobScheduler {
 public:
  JobScheduler(db::TuningStore& store, DeviceRegistry& devices, JobEventHub& events,
               LookupCache& cache, DaemonMetrics& metrics, MissCounter& misses,
               DatabaseHealth& database, const DaemonConfig& config);
  ~JobScheduler();

  void Start();
  // New work was queued.
  void Wake();
  // Stops a running item of this job within about a second. The caller has
  // already marked the job CANCELLED in the store.
  void Cancel(const std::string& job_id);
  // Stops claiming work, lets running items finish until `deadline`, then
  // interrupts them; interrupted items stay RUNNING in the database and
  // resume at the next start.
  void Drain(std::chrono::steady_clock::time_point deadline);

 private:
  struct RunningItem {
    std::string job_id;
    std::shared_ptr<std::atomic<bool>> stop;
    // Set before `stop` when the stop comes from shutdown, not CancelJob.
    std::shared_ptr<std::atomic<bool>> interrupted;
  };
  void DeviceLoop(ManagedDevice& device);
  void FlushMissCountsLoop();
  void FlushMissCounts();
  void RunItem(ManagedDevice& device, tuner::BenchmarkWorker& worker, db::JobItemClaim claim);
  // Fleet mode: renews a claim's lease until the returned thread is
  // stopped; a claim that no longer holds its item sets `stop`.
  std::jthread RenewLeaseWhileRunning(const db::JobItemClaim& claim,
                                      std::shared_ptr<std::atomic<bool>> stop);
  void FinishJobIfDone(const std::string& job_id);
  // At start: a RUNNING job whose items have all finished is finished, as
  // its last item's daemon could not store (a refused write, a kill
  // between the item's write and the job's).
  void FinishSettledJobs();
  // Runs `write` until it lands: while the database refuses it (or cannot
  // be reached), again every db_write_retry_seconds, so that a finished
  // item or job is not left RUNNING. False when it did not land: the
  // scheduler drains (a restart resumes the item) or the lease was lost.
  bool StoreUntilItLands(const std::string& what, const std::function<void()>& write);

  db::TuningStore& store_;
  DeviceRegistry& devices_;
  JobEventHub& events_;
  LookupCache& cache_;
  DaemonMetrics& metrics_;
  MissCounter& misses_;
  DatabaseHealth& database_;
  const DaemonConfig& config_;
  tuner::CompilePool pool_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool draining_ = false;
  std::map<std::string, RunningItem> running_;  // by device id
  std::vector<std::thread> threads_;
};

}  // namespace tiletune::server
