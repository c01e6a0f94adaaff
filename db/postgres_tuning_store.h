#pragma once

#include <string>

#include "db/postgres_pool.h"
#include "db/tuning_store.h"

namespace tiletune::db {

// TuningStore on a PostgreSQL database shared by any number of daemons.
// Every call borrows a pooled connection; calls that change several rows run
// in one transaction. Methods are defined in postgres_tuning_store.cpp
// (opening, devices, kernels, checks), postgres_records.cpp (records,
// import, trials), postgres_known_failures.cpp (failure memory) and
// postgres_jobs.cpp (the job queue).
class PostgresTuningStore final : public TuningStore {
 public:
  explicit PostgresTuningStore(const PostgresOptions& options);

  void UpsertDevice(const v1::DeviceFingerprint& device, const v1::Toolchain& toolchain) override;
  void UpsertKernel(const std::string& source_hash, const std::string& kernel_name,
                    const std::string& library_version, const std::string& source) override;

  std::optional<v1::Record> FindRecord(const std::string& canonical_key,
                                       const std::string& device_class) override;
  void PutRecord(const std::string& canonical_key, const v1::Record& record) override;
  RecordPage ListRecords(const std::string& op, const std::string& device_class, int page_size,
                         const std::string& page_token) override;
  // Holds off other writers of records while it checks and writes, so the
  // answer is all or nothing as with SQLite's single writer.
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
  // As SQLite's; concurrent claimers skip the item rows another holds locked
  // (FOR UPDATE SKIP LOCKED), so no item is handed out twice. The claim is
  // held by this store's owner for lease_seconds, with a new lease token.
  std::optional<JobItemClaim> ClaimNextItem(const std::string& device) override;
  bool RenewLease(const std::string& job_id, int item_index, int64_t lease) override;
  // Cancellation wins, as with SQLite.
  void UpdateItem(const std::string& job_id, const v1::JobItemProgress& item,
                  int64_t lease) override;
  bool FinishJob(const std::string& job_id, v1::JobState state, const std::string& error) override;
  bool CancelJob(const std::string& job_id) override;
  int RequeueInterrupted() override;
  std::map<v1::JobState, int64_t> CountJobsByState() override;
  void SetMissCounts(const std::map<std::string, int64_t>& counts) override;

  void AnnounceDaemon(const v1::FleetDaemon& daemon) override;
  std::vector<v1::FleetDaemon> ListDaemons() override;

  // LISTEN on a connection of its own (postgres_record_listener.h).
  std::unique_ptr<RecordWatch> WatchRecordChanges(RecordChangeFn on_change) override;

  // "ok" when the server answers and the schema is the version this binary
  // writes; PostgreSQL checks its own pages.
  std::string IntegrityCheck() override;

 private:
  const std::string url_;
  const int connect_timeout_seconds_;
  PgPool pool_;
  const std::string name_;  // the URL without its password
  const std::string owner_;
  const int64_t lease_micros_;
};

}  // namespace tiletune::db
