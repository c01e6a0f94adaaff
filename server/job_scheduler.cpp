#include "server/job_scheduler.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "kernels/core/kernel_key.h"
#include "kernels/core/key_space.h"
#include "server/import_verification.h"
#include "server/toolchain_identity.h"
#include "tuner/device_description_of.h"
#include "tuner/tuning_session.h"

namespace tiletune::server {
namespace {

bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_SUCCEEDED || state == v1::JOB_FAILED || state == v1::JOB_CANCELLED;
}

// Stores what a session does and forwards it to WatchJob streams.
class StoringObserver final : public tuner::TuningObserver {
 public:
  // `failure_key` names the device class and toolchain under which run
  // failures are remembered (template and params are added per trial).
  // `lease` fences the item's writes (db::kUnleased on one node).
  StoringObserver(db::TuningStore& store, JobEventHub& events, DaemonMetrics& metrics,
                  std::string job_id, int64_t lease, std::string canonical_key,
                  db::KnownFailure failure_key, const std::atomic<bool>& interrupted,
                  std::function<void(bool)> on_worker_fate)
      : store_(store),
        events_(events),
        metrics_(metrics),
        job_id_(std::move(job_id)),
        lease_(lease),
        canonical_key_(std::move(canonical_key)),
        device_class_(failure_key.device_class),
        failure_key_(std::move(failure_key)),
        interrupted_(interrupted),
        on_worker_fate_(std::move(on_worker_fate)) {}

  void OnTrial(const v1::Trial& trial) override {
    store_.AddTrial(canonical_key_, device_class_, trial);
    if (auto it = metrics_.trials.find(trial.status()); it != metrics_.trials.end()) {
      it->second->Increment();
    }
    if (trial.status() != v1::TRIAL_COMPILE_ERROR) {
      (trial.compile_cache_hit() ? metrics_.compile_cache_hits : metrics_.compile_cache_misses)
          .Increment();
    }
    // Only outcomes that reached the worker say something about the device.
    if (trial.status() == v1::TRIAL_CRASH) {
      on_worker_fate_(true);
    } else if (trial.status() == v1::TRIAL_OK || trial.status() == v1::TRIAL_SLOWER ||
               trial.status() == v1::TRIAL_WRONG_RESULT) {
      on_worker_fate_(false);
    }
  }

  void OnRunFailure(const v1::Trial& trial) override {
    db::KnownFailure failure = failure_key_;
    failure.kernel_name = trial.kernel_name();
    failure.params =
        kernels::VariantString(kernels::Variant(trial.params().begin(), trial.params().end()));
    failure.status = trial.status();
    failure.error = trial.error();
    failure.canonical_key = canonical_key_;
    failure.job_id = job_id_;
    store_.RememberFailure(failure);
  }

  void OnKernel(const std::string& source_hash, const kernels::KernelSource& source) override {
    if (!stored_kernels_.insert(source_hash).second) return;
    store_.UpsertKernel(source_hash, source.kernel_name, TILETUNE_KERNEL_LIBRARY_VERSION,
                        source.code);
  }

  void OnProgress(const v1::JobItemProgress& progress, v1::JobEvent::Kind kind,
                  const v1::Trial* trial) override {
    // A cancelled item was marked by CancelJob; an item interrupted by
    // shutdown must stay RUNNING so that it resumes at the next start.
    if (progress.state() == v1::JOB_CANCELLED) return;
    if (interrupted_.load()) return;
    // Held until its record has landed (StoreSucceeded): stored first, a
    // finished item whose record then failed to land would have none after
    // a restart, where a RUNNING one resumes and decides again.
    if (progress.state() == v1::JOB_SUCCEEDED) {
      succeeded_ = progress;
      return;
    }
    Store(progress, kind, trial);
  }

  // Stores the item's held end, SUCCEEDED, and tells its watchers.
  void StoreSucceeded() {
    if (succeeded_) Store(*succeeded_, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
  }

  // The item back in the queue as far as it was stored, to resume from
  // its stored trials.
  v1::JobItemProgress Requeued(const db::JobItemClaim& claim) const {
    v1::JobItemProgress progress = last_stored_;
    progress.set_index(claim.item_index);
    *progress.mutable_key() = claim.key;
    progress.set_state(v1::JOB_QUEUED);
    return progress;
  }

 private:
  void Store(const v1::JobItemProgress& progress, v1::JobEvent::Kind kind, const v1::Trial* trial) {
    store_.UpdateItem(job_id_, progress, lease_);
    last_stored_ = progress;
    v1::JobEvent event;
    event.set_kind(kind);
    event.set_job_id(job_id_);
    event.set_item_index(progress.index());
    if (trial) {
      event.mutable_params()->insert(trial->params().begin(), trial->params().end());
      event.set_status(trial->status());
      event.set_time_us(trial->timing().median_us());
      event.set_message(trial->error());
    }
    if (auto job = store_.GetJob(job_id_)) *event.mutable_job() = *job;
    events_.Publish(event);
  }

  db::TuningStore& store_;
  JobEventHub& events_;
  DaemonMetrics& metrics_;
  std::string job_id_;
  int64_t lease_;
  std::string canonical_key_;
  std::string device_class_;
  db::KnownFailure failure_key_;
  const std::atomic<bool>& interrupted_;
  std::function<void(bool)> on_worker_fate_;
  std::set<std::string> stored_kernels_;
  v1::JobItemProgress last_stored_;
  std::optional<v1::JobItemProgress> succeeded_;
};

}  // namespace

JobScheduler::JobScheduler(db::TuningStore& store, DeviceRegistry& devices, JobEventHub& events,
                           LookupCache& cache, DaemonMetrics& metrics, MissCounter& misses,
                           DatabaseHealth& database, const DaemonConfig& config)
    : store_(store),
      devices_(devices),
      events_(events),
      cache_(cache),
      metrics_(metrics),
      misses_(misses),
      database_(database),
      config_(config),
      pool_(config.compile_threads) {}

JobScheduler::~JobScheduler() {
  Drain(std::chrono::steady_clock::now());
}

void JobScheduler::Start() {
  FinishSettledJobs();
  for (const auto& device : devices_.devices()) {
    threads_.emplace_back([this, d = device.get()] { DeviceLoop(*d); });
  }
  threads_.emplace_back([this] { FlushMissCountsLoop(); });
}

void JobScheduler::FlushMissCounts() {
  // Kept in memory while the database is away, saved once it is back.
  try {
    database_.Attempt([this] { store_.SetMissCounts(misses_.TakeChangedJobCounts()); });
  } catch (const db::StoreUnwritable&) {
    // Logged once by database_; the counts only order the queue, and the
    // next misses count again.
  } catch (const db::StoreError& e) {
    spdlog::error("cannot save lookup miss counts: {}", e.what());
  }
}

void JobScheduler::FlushMissCountsLoop() {
  const auto interval =
      std::chrono::milliseconds(static_cast<int64_t>(config_.miss_count_flush_seconds * 1000));
  std::unique_lock lock(mu_);
  while (!draining_) {
    cv_.wait_for(lock, interval, [this] { return draining_; });
    lock.unlock();
    FlushMissCounts();
    lock.lock();
  }
}

void JobScheduler::Wake() {
  cv_.notify_all();
}

void JobScheduler::Cancel(const std::string& job_id) {
  std::lock_guard lock(mu_);
  for (auto& [device, item] : running_) {
    if (item.job_id == job_id) item.stop->store(true);
  }
}

void JobScheduler::Drain(std::chrono::steady_clock::time_point deadline) {
  {
    std::unique_lock lock(mu_);
    draining_ = true;
    cv_.notify_all();
    cv_.wait_until(lock, deadline, [this] { return running_.empty(); });
    for (auto& [device, item] : running_) {
      item.interrupted->store(true);
      item.stop->store(true);
    }
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void JobScheduler::DeviceLoop(ManagedDevice& device) {
  tuner::BenchmarkWorker worker(
      {config_.worker_binary, device.info.worker_env, {.policy = config_.tuning.sched_policy}});
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (draining_) return;
    }
    if (device.state.load() == v1::Device::STATE_QUARANTINED) return;
    std::optional<db::JobItemClaim> claim;
    FlushMissCounts();
    try {
      claim = store_.ClaimNextItem(device.queue);
      database_.Reachable();
    } catch (const db::StoreUnreachable& e) {
      database_.Unreachable(e.what());
    } catch (const db::StoreUnwritable&) {
      // Told to database_ by the store, and logged there once.
    } catch (const db::StoreError& e) {
      spdlog::error("device {}: cannot claim work: {}", device.info.id, e.what());
    }
    if (!claim) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(500));
      continue;
    }
    RunItem(device, worker, std::move(*claim));
  }
}

void JobScheduler::RunItem(ManagedDevice& device, tuner::BenchmarkWorker& worker,
                           db::JobItemClaim claim) {
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto interrupted_flag = std::make_shared<std::atomic<bool>>(false);
  const std::atomic<bool>& interrupted = *interrupted_flag;
  {
    std::lock_guard lock(mu_);
    running_[device.info.id] = {claim.job_id, stop, interrupted_flag};
  }
  device.state.store(v1::Device::STATE_BUSY);
  device.set_running_job(claim.job_id);
  const std::string canonical = kernels::CanonicalKeyString(claim.key);
  spdlog::info("job={} item={} device={}: tuning {}", claim.job_id, claim.item_index,
               device.info.id, canonical);

  tuner::TuningItem item{claim.job_id, claim.item_index, kernels::NormalizeKernelKey(claim.key),
                         claim.spec};
  // A worker that keeps dying points at the device, not the variants:
  // quarantine it and leave the item to resume elsewhere or after a restart.
  auto on_worker_fate = [&](bool crashed) {
    if (!crashed) {
      device.consecutive_crashes.store(0);
      return;
    }
    const int streak = device.consecutive_crashes.fetch_add(1) + 1;
    if (streak < config_.quarantine_after_crashes) return;
    device.state.store(v1::Device::STATE_QUARANTINED);
    spdlog::error("device {}: quarantined after {} worker crashes in a row", device.info.id,
                  streak);
    interrupted_flag->store(true);
    stop->store(true);
  };
  std::string why;
  kernels::KeySpace space =
      kernels::KeySpace::Of(item.key, tuner::DeviceDescriptionOf(device.info), &why);
  // A verify item times the imported record's kernel alone.
  const v1::TunedConfig* verified = VerifiedConfig(claim.spec, claim.item_index);
  if (verified && !space.empty()) {
    space =
        space.Only(verified->kernel_name(),
                   kernels::Variant(verified->params().begin(), verified->params().end()), &why);
  }
  // Run failures are remembered under the template of the failed trial.
  const db::KnownFailure failure_key{.device_class = device.info.fingerprint.device_class(),
                                     .toolchain = ToolchainFingerprint(device.info.toolchain)};
  StoringObserver observer(store_, events_, metrics_, claim.job_id, claim.lease, canonical,
                           failure_key, interrupted, on_worker_fate);
  std::jthread heartbeat;
  if (claim.lease != db::kUnleased) heartbeat = RenewLeaseWhileRunning(claim, stop);
  const std::string item_name = "job=" + claim.job_id + " item=" + std::to_string(claim.item_index);
  // Set when the run stopped because its progress could not be stored.
  bool requeue = false;
  try {
    tuner::TuningOutcome outcome;
    if (space.empty()) {
      v1::JobItemProgress& failed = outcome.progress;
      failed.set_index(claim.item_index);
      *failed.mutable_key() = claim.key;
      failed.set_state(v1::JOB_FAILED);
      failed.set_error(why);
      observer.OnProgress(failed, v1::JobEvent::KIND_ITEM_FINISHED, nullptr);
    } else {
      for (const auto& t : space.templates()) {
        const std::string kernel_name(t.kernel->name());
        for (const auto& [params, status] :
             store_.KnownFailures(kernel_name, failure_key.device_class, failure_key.toolchain)) {
          item.known_failures.emplace(kernel_name, params);
        }
      }
      tuner::TuningSession session(space, *device.backend, device.info, worker, pool_,
                                   config_.tuning);
      outcome =
          session.Run(item, store_.TrialsForItem(claim.job_id, claim.item_index), observer, *stop);
      // Before the job can be reported finished, so watchers see the count.
      device.worker_restarts.store(worker.restarts());
    }
    std::optional<v1::Record> record = std::move(outcome.record);
    if (verified && (record || outcome.progress.state() == v1::JOB_FAILED)) {
      record = SettledImport(store_.FindRecord(canonical, device.info.fingerprint.device_class()),
                             *verified, claim.job_id, record, outcome.progress.error());
      if (!record) {
        spdlog::info("{}: the imported record was replaced meanwhile; kept", item_name);
      }
    }
    // The record first, then the item's end, then the job's: a daemon
    // that drains (or dies) before the record lands leaves the item RUNNING,
    // to resume at its next start, and watchers told the item finished find
    // its record.
    bool landed = !interrupted.load();
    if (record && landed) {
      landed =
          StoreUntilItLands(item_name + ": record", [&] { store_.PutRecord(canonical, *record); });
      if (landed) {
        cache_.Put(record->device_class(), canonical, std::make_shared<const v1::Record>(*record));
      }
    }
    if (landed) {
      landed = StoreUntilItLands(item_name + ": state", [&] { observer.StoreSucceeded(); });
    }
    heartbeat = {};
    if (landed) {
      StoreUntilItLands("job=" + claim.job_id + ": state", [&] { FinishJobIfDone(claim.job_id); });
    }
  } catch (const db::LeaseLost& e) {
    spdlog::warn("{}: {}", item_name, e.what());
  } catch (const db::StoreError& e) {
    spdlog::error("{}: stopped, its progress could not be stored: {}", item_name, e.what());
    requeue = !interrupted.load();
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", item_name, e.what());
  }
  // Back in the queue (a cancelled item stays cancelled), not left RUNNING
  // until a restart: it resumes from its stored trials once writes land.
  if (requeue) {
    try {
      StoreUntilItLands(item_name + ": return to the queue", [&] {
        store_.UpdateItem(claim.job_id, observer.Requeued(claim), claim.lease);
      });
    } catch (const std::exception& e) {
      spdlog::error("{}: cannot return it to the queue: {}", item_name, e.what());
    }
  }
  heartbeat = {};
  device.set_running_job("");
  if (device.state.load() != v1::Device::STATE_QUARANTINED) {
    device.state.store(v1::Device::STATE_IDLE);
  }
  {
    std::lock_guard lock(mu_);
    running_.erase(device.info.id);
  }
  cv_.notify_all();
}

std::jthread JobScheduler::RenewLeaseWhileRunning(const db::JobItemClaim& claim,
                                                  std::shared_ptr<std::atomic<bool>> stop) {
  // Three beats per lease: one lost beat does not cost the item.
  const auto interval = std::chrono::milliseconds(config_.db_lease_seconds * 1000 / 3);
  return std::jthread([this, claim, stop, interval](std::stop_token token) {
    std::mutex mu;
    std::condition_variable_any wake;
    std::unique_lock lock(mu);
    while (!wake.wait_for(lock, token, interval, [] { return false; }) && !token.stop_requested()) {
      try {
        if (store_.RenewLease(claim.job_id, claim.item_index, claim.lease)) continue;
      } catch (const db::StoreError& e) {
        spdlog::warn("job={} item={}: lease not renewed: {}", claim.job_id, claim.item_index,
                     e.what());
        continue;
      }
      // Finished or cancelled meanwhile, or taken over by another daemon
      // after the lease ran out: its further writes would be refused.
      spdlog::warn("job={} item={}: no longer holds its lease; stopping", claim.job_id,
                   claim.item_index);
      stop->store(true);
      return;
    }
  });
}

bool JobScheduler::StoreUntilItLands(const std::string& what, const std::function<void()>& write) {
  const auto retry =
      std::chrono::milliseconds(static_cast<int64_t>(config_.db_write_retry_seconds * 1000));
  for (bool told = false;; told = true) {
    try {
      write();
      if (told) spdlog::info("{}: stored", what);
      return true;
    } catch (const db::LeaseLost& e) {
      spdlog::warn("{}: {}", what, e.what());
      return false;
    } catch (const db::StoreError& e) {
      if (!told) {
        spdlog::warn("{}: not stored, trying again every {} s: {}", what,
                     config_.db_write_retry_seconds, e.what());
      }
    }
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, retry, [this] { return draining_; })) return false;
  }
}

void JobScheduler::FinishSettledJobs() {
  try {
    std::string token;
    do {
      const db::JobPage page = store_.ListJobs({v1::JOB_RUNNING}, 100, token);
      for (const auto& job : page.jobs) FinishJobIfDone(job.id());
      token = page.next_page_token;
    } while (!token.empty());
  } catch (const db::StoreError& e) {
    spdlog::error("cannot finish the jobs whose items all finished: {}", e.what());
  }
}

void JobScheduler::FinishJobIfDone(const std::string& job_id) {
  auto job = store_.GetJob(job_id);
  if (!job || IsTerminal(job->state())) return;
  std::string error;
  for (const auto& item : job->items()) {
    if (!IsTerminal(item.state())) return;
    if (item.state() == v1::JOB_FAILED && error.empty()) {
      error = "item " + std::to_string(item.index()) + ": " + item.error();
    }
  }
  const v1::JobState state = error.empty() ? v1::JOB_SUCCEEDED : v1::JOB_FAILED;
  // Another daemon of the fleet may finish it at the same moment: the one
  // the store says did counts it and tells its watchers (the others' poll).
  if (!store_.FinishJob(job_id, state, error)) return;
  metrics_.jobs_finished.at(state)->Increment();
  spdlog::info("job={}: {}", job_id, v1::JobState_Name(state));
  v1::JobEvent event;
  event.set_kind(v1::JobEvent::KIND_JOB_FINISHED);
  event.set_job_id(job_id);
  event.set_message(error);
  if (auto finished = store_.GetJob(job_id)) *event.mutable_job() = *finished;
  events_.Publish(event);
}

}  // namespace tiletune::server
