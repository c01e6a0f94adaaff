#include "db/postgres_migrations.h"

#include <array>
#include <string>

#include "db/tuning_store.h"

namespace tiletune::db {
namespace {

// One step of the schema history, never edited once released. The schema
// mirrors the SQLite one (sqlite_migrations.cpp): enum columns hold proto
// enum numbers, *_us columns unix microseconds, BYTEA columns whole protos;
// the other columns are what queries filter and sort on. Key columns
// collate as "C" so that ordering (and so paging) is by bytes, as in SQLite,
// whatever the database's locale.
struct Migration {
  int version;
  const char* sql;
};

constexpr std::array kMigrations = {
    Migration{1, R"sql(
CREATE TABLE devices (
  device_class TEXT COLLATE "C" PRIMARY KEY,
  vendor TEXT NOT NULL,
  arch TEXT NOT NULL,
  name TEXT NOT NULL,
  compute_units BIGINT NOT NULL,
  memory_bytes BIGINT NOT NULL,
  l2_bytes BIGINT NOT NULL,
  clock_mhz BIGINT NOT NULL,
  driver_version TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  kernel_library_version TEXT NOT NULL,
  first_seen_us BIGINT NOT NULL,
  last_seen_us BIGINT NOT NULL
);

CREATE TABLE kernels (
  source_hash TEXT COLLATE "C" PRIMARY KEY,
  kernel_name TEXT NOT NULL,
  library_version TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at_us BIGINT NOT NULL
);

CREATE TABLE records (
  canonical_key TEXT COLLATE "C" NOT NULL,
  device_class TEXT COLLATE "C" NOT NULL,
  op TEXT COLLATE "C" NOT NULL,
  winner INTEGER NOT NULL,
  tuned_median_us DOUBLE PRECISION NOT NULL,
  baseline_median_us DOUBLE PRECISION NOT NULL,
  speedup DOUBLE PRECISION NOT NULL,
  measured_at_us BIGINT,
  record BYTEA NOT NULL,
  PRIMARY KEY (canonical_key, device_class)
);
CREATE INDEX records_by_op ON records (op, canonical_key, device_class);
CREATE INDEX records_by_device_class ON records (device_class, op, canonical_key);

CREATE TABLE trials (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id TEXT COLLATE "C" NOT NULL,
  item_index INTEGER NOT NULL,
  canonical_key TEXT COLLATE "C" NOT NULL,
  device_class TEXT COLLATE "C" NOT NULL,
  params TEXT NOT NULL,
  status INTEGER NOT NULL,
  median_us DOUBLE PRECISION NOT NULL,
  rel_error DOUBLE PRECISION NOT NULL,
  error TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  finished_at_us BIGINT,
  trial BYTEA NOT NULL
);
CREATE INDEX trials_by_item ON trials (job_id, item_index);
CREATE INDEX trials_by_key ON trials (canonical_key, device_class);

-- seq orders jobs created in the same microsecond (SQLite's rowid).
CREATE TABLE jobs (
  id TEXT COLLATE "C" PRIMARY KEY,
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  name TEXT NOT NULL,
  state INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  device TEXT COLLATE "C" NOT NULL,
  created_at_us BIGINT NOT NULL,
  started_at_us BIGINT,
  finished_at_us BIGINT,
  error TEXT NOT NULL,
  spec BYTEA NOT NULL,
  miss_count BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_state ON jobs (state, device, priority DESC, miss_count DESC, created_at_us);
CREATE INDEX jobs_by_created ON jobs (created_at_us, seq);
CREATE INDEX jobs_by_name ON jobs (name, state);

CREATE TABLE job_items (
  job_id TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  item_index INTEGER NOT NULL,
  canonical_key TEXT COLLATE "C" NOT NULL,
  state INTEGER NOT NULL,
  progress BYTEA NOT NULL,
  PRIMARY KEY (job_id, item_index)
);
CREATE INDEX job_items_by_state ON job_items (state);
CREATE INDEX job_items_by_key ON job_items (canonical_key, state);

CREATE TABLE known_failures (
  kernel_name TEXT COLLATE "C" NOT NULL,
  params TEXT COLLATE "C" NOT NULL,
  device_class TEXT COLLATE "C" NOT NULL,
  toolchain TEXT COLLATE "C" NOT NULL,
  status INTEGER NOT NULL,
  error TEXT NOT NULL,
  canonical_key TEXT NOT NULL,
  job_id TEXT NOT NULL,
  first_seen_us BIGINT NOT NULL,
  PRIMARY KEY (kernel_name, device_class, toolchain, params)
);
)sql"},
    // Fleet claims: who holds a RUNNING item (owner, the daemon id) until
    // when (lease_expires_us, renewed by its heartbeat), and the claim's
    // fencing token (lease, from item_leases: a new one per claim).
    Migration{2, R"sql(
CREATE SEQUENCE item_leases;
ALTER TABLE job_items
  ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '',
  ADD COLUMN lease BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN lease_expires_us BIGINT NOT NULL DEFAULT 0;
CREATE INDEX job_items_by_owner ON job_items (owner, state);
)sql"},
    // Record changes are announced on channel tiletune_records as
    // "<device class>\n<canonical key>", delivered at commit, so every
    // daemon's lookup cache can drop what it holds for that key. A payload
    // past NOTIFY's 8000-byte limit announces the whole class instead.
    Migration{3, R"sql(
CREATE FUNCTION tiletune_notify_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload TEXT := NEW.device_class || E'\n' || NEW.canonical_key;
BEGIN
  IF octet_length(payload) > 7900 THEN
    payload := NEW.device_class || E'\n';
  END IF;
  PERFORM pg_notify('tiletune_records', payload);
  RETURN NULL;
END
$$;
CREATE TRIGGER records_changed AFTER INSERT OR UPDATE ON records
  FOR EACH ROW EXECUTE FUNCTION tiletune_notify_record_change();
)sql"},
    // Who submitted each job, so that the per-client quota counts from the
    // queue itself.
    Migration{4, R"sql(
ALTER TABLE jobs ADD COLUMN submitted_by TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX jobs_by_submitter ON jobs (submitted_by, state);
)sql"},
    // The fleet view: one row per daemon sharing the database, replaced at
    // each heartbeat. `daemon` is the whole v1.FleetDaemon as last
    // announced (its devices, their classes, states and running jobs).
    Migration{5, R"sql(
CREATE TABLE daemons (
  daemon_id TEXT COLLATE "C" PRIMARY KEY,
  address TEXT NOT NULL,
  heartbeat_us BIGINT NOT NULL,
  daemon BYTEA NOT NULL
);
)sql"},
    // Each timed trial's and record's roofline: achieved TFLOP/s and TB/s,
    // and the fraction of the roofline floor (NULL when the device's
    // ceilings are unknown, and in rows stored before they were kept).
    Migration{6, R"sql(
ALTER TABLE records
  ADD COLUMN achieved_tflops DOUBLE PRECISION,
  ADD COLUMN achieved_tbps DOUBLE PRECISION,
  ADD COLUMN roofline_fraction DOUBLE PRECISION;
ALTER TABLE trials
  ADD COLUMN achieved_tflops DOUBLE PRECISION,
  ADD COLUMN achieved_tbps DOUBLE PRECISION,
  ADD COLUMN roofline_fraction DOUBLE PRECISION;
)sql"},
    // Each record's provenance (the whole of it is in `record`): its trust
    // (v1.Trust: 0 measured here, 1 imported and unverified, 2 trusted, 3
    // verified, 4 verify failed) and, for imported records, when and from
    // which daemon.
    Migration{7, R"sql(
ALTER TABLE records
  ADD COLUMN trust INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN imported_at_us BIGINT,
  ADD COLUMN source_daemon TEXT;
)sql"},
    // The idempotency key a job was submitted with: a retried SubmitJob
    // finds its job instead of making another, whichever daemon of the
    // fleet it reaches. NULL (no key) never collides.
    Migration{8, R"sql(
ALTER TABLE jobs ADD COLUMN request_id TEXT COLLATE "C";
CREATE UNIQUE INDEX jobs_by_request_id ON jobs (submitted_by, request_id);
)sql"},
};

// Any constant shared by every tiletuned: the key of the migration lock.
constexpr int64_t kMigrationLock = 0x74696c6574756e65;  // "tiletune"

}  // namespace

int PostgresSchemaVersion() {
  return kMigrations.back().version;
}

void MigratePostgresSchema(PgConnection& connection) {
  PgTransaction transaction(connection, PgTransactionKind::kWrite);
  connection.Exec("SELECT pg_advisory_xact_lock($1)", PgParams(kMigrationLock));
  int stored = 0;
  if (!connection.Exec("SELECT to_regclass('schema_version') IS NOT NULL").Bool(0, 0)) {
    connection.ExecScript("CREATE TABLE schema_version (version INTEGER NOT NULL)");
  } else {
    auto row = connection.Exec("SELECT max(version) FROM schema_version");
    if (!row.IsNull(0, 0)) stored = static_cast<int>(row.Int64(0, 0));
  }
  if (stored > PostgresSchemaVersion()) {
    throw StoreError(connection.name() + ": database schema version " + std::to_string(stored) +
                     " is newer than this tiletuned supports (" +
                     std::to_string(PostgresSchemaVersion()) +
                     "); upgrade tiletuned or use another --db");
  }
  if (stored == PostgresSchemaVersion()) return;
  for (const auto& migration : kMigrations) {
    if (migration.version > stored) connection.ExecScript(migration.sql);
  }
  connection.Exec("DELETE FROM schema_version");
  connection.Exec("INSERT INTO schema_version (version) VALUES ($1)",
                  PgParams(PostgresSchemaVersion()));
  transaction.Commit();
}

}  // namespace tiletune::db
