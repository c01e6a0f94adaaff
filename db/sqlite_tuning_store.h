#pragma once

#include <memory>
#include <string>

#include "db/sqlite_read_pool.h"
#include "db/sqlite_write_queue.h"
#include "db/tuning_store.h"

namespace tiletune::db {

// TuningStore on one SQLite file: every write goes through the single
// writer thread, every query through the read pool. Methods are defined in
// sqlite_tuning_store.cpp (opening, devices, kernels, checks),
// sqlite_records.cpp (records, import, trials), sqlite_known_failures.cpp
// (failure memory) and sqlite_jobs.cpp (the job queue).
class SqliteTuningStore final : public TuningStore {
 public:
  explicit SqliteTuningStore(const SqliteOptions& options);

  void UpsertDevice(const v1::DeviceFingerprint& device, const v1::Toolchain& toolchain) override;
  void UpsertKernel(const std::string& source_hash, const std::string& kernel_name,
                    const std::string& library_version, const std::string& source) override;

  std::optional<v1::Record> FindRecord(const std::string& canonical_key,
                                       const std::string& device_class) override;
  void PutRecord(const std::string& canonical_key, const v1::Record& record) override;
  RecordPage ListRecords(const std::string& op, const std::string& device_class, int page_size,
                         const std::string& page_token) override;
  std::vector<v1::ImportReject> ImportRecords(const std::vector<ImportedRecord>& records,
                                              bool replace, bool dry_run) override;

  int64_t AddTrial(const std::string& canonical_key, const std::string& device_class,
                   const v1::Trial& trial) override;
  std::vector<v1::Trial> TrialsForItem(const std::string& job_id, int item_index) override;

  void RememberFailure(const KnownFailure& failure) override;
  std::map<std::string, v1::TrialStatus> KnownFailures(const std::string& kernel_name,
                                                       const std::string& device_class,
                                                       const std::string& toolchain) override;

  using TuningStore::CreateJob;
  JobAdmissionResult CreateJob(const v1::Job& job, const std::vector<std::string>& canonical_keys,
                               const JobAdmission& admission) override;
  std::optional<v1::Job> GetJob(const std::string& job_id) override;
  JobPage ListJobs(const std::vector<v1::JobState>& states, int page_size,
                   const std::string& page_token) override;
  // A RUNNING job whose items are all claimed or finished does not hold the
  // device: the next QUEUED job may start beside it.
  std::optional<JobItemClaim> ClaimNextItem(const std::string& device) override;
  // One node, no leases: true while the item is RUNNING.
  bool RenewLease(const std::string& job_id, int item_index, int64_t lease) override;
  // Cancellation wins: an item already CANCELLED keeps that state, though
  // its counters are saved. Leases are not checked: one daemon writes.
  void UpdateItem(const std::string& job_id, const v1::JobItemProgress& item,
                  int64_t lease) override;
  // Items still QUEUED or RUNNING become CANCELLED: they will never run.
  bool FinishJob(const std::string& job_id, v1::JobState state, const std::string& error) override;
  bool CancelJob(const std::string& job_id) override;
  int RequeueInterrupted() override;
  std::map<v1::JobState, int64_t> CountJobsByState() override;
  void SetMissCounts(const std::map<std::string, int64_t>& counts) override;

  void AnnounceDaemon(const v1::FleetDaemon& daemon) override;
  std::vector<v1::FleetDaemon> ListDaemons() override;

  // nullptr: this daemon is the only writer of its file.
  std::unique_ptr<RecordWatch> WatchRecordChanges(RecordChangeFn on_change) override;

  std::string IntegrityCheck() override;

 private:
  // Destroyed in reverse: the write queue drains first, then the readers
  // close, then the writer connection, whose close (the last one)
  // checkpoints the WAL into the database file.
  std::unique_ptr<Connection> writer_connection_;
  std::unique_ptr<ReadPool> readers_;
  std::unique_ptr<WriteQueue> writer_;
};

}  // namespace tiletune::db
