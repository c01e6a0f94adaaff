#include "db/sqlite_migrations.h"

#include <array>
#include <string>

#include "db/tuning_store.h"

namespace tiletune::db {
namespace {

// One step of the schema history. Steps are never edited once released: a
// change is a new step. Enum columns (state, status, winner) hold the proto
// enum numbers; *_us columns hold unix microseconds; whole protos are kept
// in the BLOB columns, the other columns are what queries filter and sort on.
struct Migration {
  int version;
  const char* sql;
};

constexpr std::array kMigrations = {
    Migration{1, R"sql(
CREATE TABLE devices (
  device_class TEXT PRIMARY KEY,
  vendor TEXT NOT NULL,
  arch TEXT NOT NULL,
  name TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  clock_mhz INTEGER NOT NULL,
  driver_version TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  kernel_library_version TEXT NOT NULL,
  first_seen_us INTEGER NOT NULL,
  last_seen_us INTEGER NOT NULL
);

CREATE TABLE kernels (
  source_hash TEXT PRIMARY KEY,
  kernel_name TEXT NOT NULL,
  library_version TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at_us INTEGER NOT NULL
);

CREATE TABLE records (
  canonical_key TEXT NOT NULL,
  device_class TEXT NOT NULL,
  op TEXT NOT NULL,
  winner INTEGER NOT NULL,
  tuned_median_us REAL NOT NULL,
  baseline_median_us REAL NOT NULL,
  speedup REAL NOT NULL,
  measured_at_us INTEGER,
  record BLOB NOT NULL,
  PRIMARY KEY (canonical_key, device_class)
);
CREATE INDEX records_by_op ON records (op, canonical_key, device_class);
CREATE INDEX records_by_device_class ON records (device_class, op, canonical_key);

CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL,
  item_index INTEGER NOT NULL,
  canonical_key TEXT NOT NULL,
  device_class TEXT NOT NULL,
  params TEXT NOT NULL,
  status INTEGER NOT NULL,
  median_us REAL NOT NULL,
  rel_error REAL NOT NULL,
  error TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  finished_at_us INTEGER,
  trial BLOB NOT NULL
);
CREATE INDEX trials_by_item ON trials (job_id, item_index);
CREATE INDEX trials_by_key ON trials (canonical_key, device_class);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  state INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  device TEXT NOT NULL,
  created_at_us INTEGER NOT NULL,
  started_at_us INTEGER,
  finished_at_us INTEGER,
  error TEXT NOT NULL,
  spec BLOB NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, device, priority DESC, created_at_us);
CREATE INDEX jobs_by_created ON jobs (created_at_us);

CREATE TABLE job_items (
  job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  item_index INTEGER NOT NULL,
  canonical_key TEXT NOT NULL,
  state INTEGER NOT NULL,
  progress BLOB NOT NULL,
  PRIMARY KEY (job_id, item_index)
);
CREATE INDEX job_items_by_state ON job_items (state);
CREATE INDEX job_items_by_key ON job_items (canonical_key, state);
)sql"},
    // Failure memory: variants that hung, crashed or were wrong, never run
    // again on the same device class and toolchain. Tune-on-miss counts
    // misses per queued job, which orders the queue among equal priorities.
    Migration{2, R"sql(
CREATE TABLE known_failures (
  kernel_name TEXT NOT NULL,
  params TEXT NOT NULL,
  device_class TEXT NOT NULL,
  toolchain TEXT NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  canonical_key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  first_seen_us INTEGER NOT NULL,
  PRIMARY KEY (kernel_name, device_class, toolchain, params)
);

ALTER TABLE jobs ADD COLUMN miss_count INTEGER NOT NULL DEFAULT 0;
DROP INDEX jobs_by_state;
CREATE INDEX jobs_by_state ON jobs (state, device, priority DESC, miss_count DESC, created_at_us);
)sql"},
    // Who submitted each job, so that the per-client quota counts from the
    // queue itself and holds across restarts.
    Migration{3, R"sql(
ALTER TABLE jobs ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_by_submitter ON jobs (submitted_by, state);
)sql"},
    // The fleet view; on one node it holds this daemon alone. `daemon` is
    // the whole v1.FleetDaemon as last announced.
    Migration{4, R"sql(
CREATE TABLE daemons (
  daemon_id TEXT PRIMARY KEY,
  address TEXT NOT NULL,
  heartbeat_us INTEGER NOT NULL,
  daemon BLOB NOT NULL
);
)sql"},
    // Each timed trial's and record's roofline: achieved TFLOP/s and TB/s,
    // and the fraction of the roofline floor (NULL when the device's
    // ceilings are unknown, and in rows stored before they were kept).
    Migration{5, R"sql(
ALTER TABLE records ADD COLUMN achieved_tflops REAL;
ALTER TABLE records ADD COLUMN achieved_tbps REAL;
ALTER TABLE records ADD COLUMN roofline_fraction REAL;
ALTER TABLE trials ADD COLUMN achieved_tflops REAL;
ALTER TABLE trials ADD COLUMN achieved_tbps REAL;
ALTER TABLE trials ADD COLUMN roofline_fraction REAL;
)sql"},
    // Each record's provenance (the whole of it is in `record`): its trust
    // (v1.Trust: 0 measured here, 1 imported and unverified, 2 trusted, 3
    // verified, 4 verify failed) and, for imported records, when and from
    // which daemon.
    Migration{6, R"sql(
ALTER TABLE records ADD COLUMN trust INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN imported_at_us INTEGER;
ALTER TABLE records ADD COLUMN source_daemon TEXT;
)sql"},
    // The idempotency key a job was submitted with: a retried SubmitJob
    // finds its job instead of making another. NULL (no key) never collides.
    Migration{7, R"sql(
ALTER TABLE jobs ADD COLUMN request_id TEXT;
CREATE UNIQUE INDEX jobs_by_request_id ON jobs (submitted_by, request_id);
)sql"},
};

}  // namespace

int SqliteSchemaVersion() {
  return kMigrations.back().version;
}

int StoredSchemaVersion(Connection& connection) {
  return std::stoi(connection.QueryText("PRAGMA user_version"));
}

void RefuseNewerSchema(Connection& connection) {
  int stored = StoredSchemaVersion(connection);
  if (stored > SqliteSchemaVersion()) {
    throw StoreError(connection.path() + ": database schema version " + std::to_string(stored) +
                     " is newer than this tiletuned supports (" +
                     std::to_string(SqliteSchemaVersion()) +
                     "); upgrade tiletuned or use another --db");
  }
}

void MigrateSchema(Connection& connection) {
  // Read the version inside the write transaction: another process may have
  // migrated the file since we last looked.
  Transaction transaction(connection, TransactionKind::kWrite);
  RefuseNewerSchema(connection);
  int stored = StoredSchemaVersion(connection);
  if (stored == SqliteSchemaVersion()) return;
  for (const auto& migration : kMigrations) {
    if (migration.version > stored) connection.Exec(migration.sql);
  }
  connection.Exec("PRAGMA user_version = " + std::to_string(SqliteSchemaVersion()));
  transaction.Commit();
}

}  // namespace tiletune::db
