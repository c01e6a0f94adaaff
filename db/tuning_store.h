#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiletune/v1/jobs.pb.h"
#include "tiletune/v1/records.pb.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::db {

// Any storage failure (I/O, corruption, a newer schema). The message is meant
// for an operator.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The database cannot be reached: the connection failed or broke (server
// down or restarting, network). The same call may work once it is back.
class StoreUnreachable : public StoreError {
 public:
  using StoreError::StoreError;
};

// The database refuses to store anything for now, for a reason of its own:
// the disk is full, an I/O error, a read-only file or server. Reads may go
// on; the same write may work once there is room again.
class StoreUnwritable : public StoreError {
 public:
  using StoreError::StoreError;
};

// Told after each write that reached the database: nullptr when it was
// stored, the error when the database refused it (StoreUnwritable). Runs on
// the writing thread and must not call back into the store.
using WriteOutcomeFn = std::function<void(const StoreUnwritable* refused)>;

// A page_token that no page of this store handed out (garbage, or a token
// of another listing). The caller's mistake, not a storage failure.
class InvalidPageToken : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A claim's lease, the fencing token of fleet mode: each claim of an item
// gets a new one, and writes of the item that carry an older one are
// refused (LeaseLost). Stores without leases (SQLite, one node) hand out
// kUnleased; writers that hold no claim pass it too.
constexpr int64_t kUnleased = 0;

// Thrown when a write carries a lease the item no longer has: its lease ran
// out and another daemon claimed it. The caller must stop working on it.
class LeaseLost : public StoreError {
 public:
  using StoreError::StoreError;
};

// The next piece of work for a device: one item of one job.
struct JobItemClaim {
  std::string job_id;
  int item_index = 0;
  v1::KernelKey key;
  v1::JobSpec spec;
  int64_t lease = kUnleased;
};

// Caps that CreateJob checks in the transaction that inserts the job, so
// that daemons sharing a database cannot pass one together; 0: no cap.
// Counted are jobs QUEUED or RUNNING.
struct JobAdmission {
  int64_t max_active = 0;            // all jobs
  int64_t max_active_submitted = 0;  // of the job's submitted_by
  int64_t max_active_named = 0;      // with the job's spec name
  // One-kernel jobs: when an active job in the same queue (Job.device) has
  // an unfinished item for the key, that job stands and none is created.
  bool reuse_active_for_key = false;
};

struct JobAdmissionResult {
  enum class Outcome {
    kCreated,
    kReused,
    // The job's (submitted_by, request_id) was created before with the same
    // spec: job_id is that job.
    kAlreadyExists,
    // ... with another spec: job_id is that job, nothing is written.
    kRequestIdTaken,
    kTooManyActive,
    kTooManySubmitted,
    kTooManyNamed
  };
  Outcome outcome = Outcome::kCreated;
  std::string job_id;  // the job created, reused or created before
  int64_t active = 0;  // refused: the count that reached its cap
};

struct RecordPage {
  std::vector<v1::Record> records;
  std::string next_page_token;  // empty on the last page
  // tokens_after[i] lists on after records[i], for a caller that answers
  // only part of the page (a response has a size limit).
  std::vector<std::string> tokens_after;
};

struct JobPage {
  std::vector<v1::Job> jobs;
  std::string next_page_token;
  std::vector<std::string> tokens_after;  // as RecordPage's
};

// A record to import with the canonical key the caller computed for it and
// the 1-based line it came from.
struct ImportedRecord {
  int line = 0;
  std::string canonical_key;
  v1::Record record;
};

// A variant that hung, crashed or gave a wrong result on a device class with
// a toolchain (fingerprint): later jobs skip it.
struct KnownFailure {
  std::string kernel_name;
  std::string params;  // kernels::VariantString
  std::string device_class;
  std::string toolchain;
  v1::TrialStatus status = v1::TRIAL_STATUS_UNSPECIFIED;
  std::string error;
  std::string canonical_key;  // where it was seen first
  std::string job_id;
};

// (device class, canonical key) of a record another writer changed; an
// empty key means any record of the class, an empty class any record.
using RecordChangeFn =
    std::function<void(const std::string& device_class, const std::string& canonical_key)>;

// Keeps reporting record changes while it lives.
class RecordWatch {
 public:
  virtual ~RecordWatch() = default;
};

// The tuning database. The server and tuner use only this interface; SQLite
// is the embedded implementation, PostgreSQL the fleet one. Keys are
// canonical strings computed by kernels::CanonicalKeyString: the store does
// not interpret kernel keys. Every method is thread-safe. Writes are durable
// when the call returns.
class TuningStore {
 public:
  virtual ~TuningStore() = default;

  // Devices and kernels.
  virtual void UpsertDevice(const v1::DeviceFingerprint& device,
                            const v1::Toolchain& toolchain) = 0;
  virtual void UpsertKernel(const std::string& source_hash, const std::string& kernel_name,
                            const std::string& library_version, const std::string& source) = 0;

  // Records: the best known answer per (canonical key, device class).
  virtual std::optional<v1::Record> FindRecord(const std::string& canonical_key,
                                               const std::string& device_class) = 0;
  // Inserts or replaces the record for its key and device class.
  virtual void PutRecord(const std::string& canonical_key, const v1::Record& record) = 0;
  // Filters are exact; empty means any. Ordered by op, key, device class.
  // Throws InvalidPageToken for a token this listing did not hand out.
  virtual RecordPage ListRecords(const std::string& op, const std::string& device_class,
                                 int page_size, const std::string& page_token) = 0;
  // Every record ListRecords would list, page by page, so that a slow sink
  // holds no connection between pages. The same on every engine.
  void ExportRecords(const std::string& op, const std::string& device_class,
                     const std::function<void(const v1::Record&)>& sink);
  // All or nothing: returns the lines whose key and device class already
  // have a record (when !replace) or repeat an earlier line; on any such
  // conflict, or when dry_run, nothing is written.
  virtual std::vector<v1::ImportReject> ImportRecords(const std::vector<ImportedRecord>& records,
                                                      bool replace, bool dry_run) = 0;

  // Trials: every variant tried, whatever its outcome.
  virtual int64_t AddTrial(const std::string& canonical_key, const std::string& device_class,
                           const v1::Trial& trial) = 0;
  virtual std::vector<v1::Trial> TrialsForItem(const std::string& job_id, int item_index) = 0;

  // Failure memory. Remembering a failure already known keeps the first.
  virtual void RememberFailure(const KnownFailure& failure) = 0;
  // Params (kernels::VariantString) -> status of the failures known for a
  // kernel template on a device class with a toolchain.
  virtual std::map<std::string, v1::TrialStatus> KnownFailures(const std::string& kernel_name,
                                                               const std::string& device_class,
                                                               const std::string& toolchain) = 0;

  // Jobs. CreateJob stores the job (state QUEUED, `device`, `submitted_by`
  // and `request_id` as given) and one item per spec kernel, with its
  // canonical key and the variants job.items() plans for it, unless a job with the same non-empty
  // (submitted_by, request_id) exists (kAlreadyExists or kRequestIdTaken, before any cap: a retry
  // finds its job even when the queue is full), or `admission` refuses it or names a job to reuse;
  // then nothing is written. The check and the insert are one transaction, and the pair is UNIQUE
  // in the schema: concurrent creations with one request id, from any number of daemons sharing the
  // database, store one job.
  virtual JobAdmissionResult CreateJob(const v1::Job& job,
                                       const std::vector<std::string>& canonical_keys,
                                       const JobAdmission& admission) = 0;
  void CreateJob(const v1::Job& job, const std::vector<std::string>& canonical_keys) {
    CreateJob(job, canonical_keys, JobAdmission{});
  }
  virtual std::optional<v1::Job> GetJob(const std::string& job_id) = 0;
  // Newest first; empty `states` means every state. Throws InvalidPageToken
  // like ListRecords.
  virtual JobPage ListJobs(const std::vector<v1::JobState>& states, int page_size,
                           const std::string& page_token) = 0;
  // The next item for `device` (the queue a job was created for): first the
  // remaining items of a job already RUNNING there, else the first item of
  // the QUEUED job with the highest priority, then the most lookup misses,
  // then the oldest. Marks item and job RUNNING. With leases, a RUNNING item
  // whose lease ran out counts as remaining: its daemon is gone.
  virtual std::optional<JobItemClaim> ClaimNextItem(const std::string& device) = 0;
  // Extends the lease of a claimed item (the heartbeat). False when the
  // claim no longer holds the item: it finished or was cancelled, or (with
  // leases) another daemon took it over.
  virtual bool RenewLease(const std::string& job_id, int item_index, int64_t lease) = 0;
  // Saves an item's progress (state, counters, best so far). With a lease
  // other than kUnleased, throws LeaseLost unless it is the item's current
  // one, so an item taken over never completes twice.
  virtual void UpdateItem(const std::string& job_id, const v1::JobItemProgress& item,
                          int64_t lease) = 0;
  // Marks the job finished (SUCCEEDED/FAILED/CANCELLED) when it is not
  // finished already. True when this call finished it: of daemons that
  // finish one job together, exactly one is told so.
  virtual bool FinishJob(const std::string& job_id, v1::JobState state,
                         const std::string& error) = 0;
  // Marks a QUEUED/RUNNING job and its unfinished items CANCELLED. False if
  // the job does not exist or had already finished.
  virtual bool CancelJob(const std::string& job_id) = 0;
  // At daemon start: RUNNING items go back to QUEUED (their trials stay, so
  // a resumed item skips what it already tried); with leases, only those
  // this daemon (its owner id) held. Returns the items requeued.
  virtual int RequeueInterrupted() = 0;
  virtual std::map<v1::JobState, int64_t> CountJobsByState() = 0;
  // Sets the lookup misses counted for jobs (id -> count); unknown ids are
  // ignored.
  virtual void SetMissCounts(const std::map<std::string, int64_t>& counts) = 0;

  // The fleet view. AnnounceDaemon inserts or replaces the row of
  // daemon.daemon_id with what it says (its devices, their states and
  // running jobs) and stamps it with the current time, the heartbeat.
  // ListDaemons returns every daemon ever announced, ordered by id, with
  // last_heartbeat and heartbeat_age_seconds set; rows are never deleted, so
  // a stopped daemon is seen as one whose heartbeat grows old.
  virtual void AnnounceDaemon(const v1::FleetDaemon& daemon) = 0;
  virtual std::vector<v1::FleetDaemon> ListDaemons() = 0;

  // Calls `on_change`, on a thread of its own, whenever a record is written
  // (by any daemon), so that caches in front of the store stay exact; first
  // with ("", "") and again after any gap in which changes may have been
  // missed. nullptr where only this process writes (SQLite).
  virtual std::unique_ptr<RecordWatch> WatchRecordChanges(RecordChangeFn on_change) = 0;

  // "ok" when PRAGMA integrity_check (or the engine's equivalent) passes.
  virtual std::string IntegrityCheck() = 0;

  // Hands the outcome of every write from now on to `on_write` (writes that
  // change nothing are no news, as a claim that finds no work). Set once,
  // before the store is shared between threads.
  void ReportWrites(WriteOutcomeFn on_write) { on_write_ = std::move(on_write); }

 protected:
  // For the engines, where their writes commit or fail.
  void ReportWrite(const StoreUnwritable* refused) const {
    if (on_write_) on_write_(refused);
  }

 private:
  WriteOutcomeFn on_write_;
};

struct SqliteOptions {
  std::string path;          // database file; created if missing
  int read_connections = 4;  // pooled readers (WAL allows them beside the writer)
  int busy_timeout_ms = 5000;
};

// Opens (creating or migrating) a SQLite tuning database. Throws StoreError
// when the file is newer than this binary understands or fails quick_check.
std::unique_ptr<TuningStore> OpenSqliteStore(const SqliteOptions& options);

// The schema version this binary writes (PRAGMA user_version).
int SqliteSchemaVersion();

struct PostgresOptions {
  // postgresql://[user[:password]@]host[:port]/dbname[?param=value...], or a
  // libpq conninfo string; libpq's PG* variables and ~/.pgpass fill gaps.
  std::string url;
  int connections = 8;  // pooled, opened as needed
  int connect_timeout_seconds = 5;
  // Fleet mode: who holds the items this store claims (unique per daemon,
  // stable across its restarts; empty: the host name), and how long a claim
  // lasts without RenewLease before another daemon may take the item.
  std::string owner;
  int lease_seconds = 30;
};

// This machine's host name ("localhost" when it has none): the default
// PostgresOptions::owner.
std::string HostName();

// Connects to a PostgreSQL tuning database, creating or migrating its
// schema. Throws StoreError (naming the database without its password)
// when it cannot connect or the schema is newer than this binary.
std::unique_ptr<TuningStore> OpenPostgresStore(const PostgresOptions& options);

// The version stored in the schema_version table.
int PostgresSchemaVersion();

// The daemon's choice of store: `db` is a postgresql:// (or postgres://)
// URL, or else a SQLite file path.
struct StoreOptions {
  std::string db;
  int sqlite_read_connections = 4;
  int sqlite_busy_timeout_ms = 5000;
  int postgres_connections = 8;
  int postgres_connect_timeout_seconds = 5;
  std::string postgres_owner;
  int postgres_lease_seconds = 30;
};

bool IsPostgresUrl(const std::string& db);
std::unique_ptr<TuningStore> OpenStore(const StoreOptions& options);
// `db` fit for logs and messages: a URL loses its password.
std::string DescribeDb(const std::string& db);

}  // namespace tiletune::db
