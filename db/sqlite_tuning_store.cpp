#include "db/sqlite_tuning_store.h"

#include <stdexcept>

#include "db/device_upsert_statement.h"
#include "db/sqlite_columns.h"
#include "db/sqlite_migrations.h"
#include "db/store_rules.h"

namespace tiletune::db {
namespace {

// Every row a checking pragma returns, one per line: "ok" when all is well.
std::string CheckReport(Connection& connection, const std::string& pragma) {
  auto rows = connection.Prepare(pragma);
  std::string report;
  while (rows.Step()) {
    if (!report.empty()) report += "\n";
    report += rows.Text(0);
  }
  return report;
}

std::unique_ptr<Connection> OpenWriter(const SqliteOptions& options) {
  if (options.path.empty()) throw std::invalid_argument("database path is empty");
  auto connection = std::make_unique<Connection>(options.path, OpenMode::kReadWriteCreate,
                                                 options.busy_timeout_ms);
  // The first read of the file: also where a file that is not a database fails.
  RefuseNewerSchema(*connection);
  if (connection->QueryText("PRAGMA journal_mode = WAL") != "wal") {
    throw StoreError("database " + options.path +
                     ": cannot use WAL journal mode (a network or read-only file system?)");
  }
  // FULL: WAL commits are fsynced, so an acknowledged job state survives
  // power loss, not only a crash of the daemon.
  connection->Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
  std::string check = CheckReport(*connection, "PRAGMA quick_check");
  if (check != "ok") {
    throw StoreError("database " + options.path + " failed quick_check: " + check +
                     "; restore a backup or use another --db");
  }
  MigrateSchema(*connection);
  return connection;
}

}  // namespace

std::unique_ptr<TuningStore> OpenSqliteStore(const SqliteOptions& options) {
  return std::make_unique<SqliteTuningStore>(options);
}

SqliteTuningStore::SqliteTuningStore(const SqliteOptions& options)
    : writer_connection_(OpenWriter(options)),
      readers_(std::make_unique<ReadPool>(options.path, options.read_connections,
                                          options.busy_timeout_ms)),
      writer_(std::make_unique<WriteQueue>(
          *writer_connection_, [this](const StoreUnwritable* refused) { ReportWrite(refused); })) {}

void SqliteTuningStore::UpsertDevice(const v1::DeviceFingerprint& device,
                                     const v1::Toolchain& toolchain) {
  RequireDeviceClass(device);
  const int64_t now = NowMicros();
  writer_->Run([&](Connection& connection) {
    WithUpsertDeviceValues(device, toolchain, now, [&](const auto&... values) {
      connection.Prepare(std::string(kUpsertDeviceSql)).Bind(values...).Run();
    });
  });
}

void SqliteTuningStore::UpsertKernel(const std::string& source_hash, const std::string& kernel_name,
                                     const std::string& library_version,
                                     const std::string& source) {
  RequireSourceHash(source_hash);
  int64_t now = NowMicros();
  writer_->Run([&](Connection& connection) {
    connection
        .Prepare(
            "INSERT INTO kernels (source_hash, kernel_name, library_version, source,"
            " created_at_us) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (source_hash) DO UPDATE SET kernel_name = excluded.kernel_name,"
            " library_version = excluded.library_version, source = excluded.source")
        .Bind(source_hash, kernel_name, library_version, source, now)
        .Run();
  });
}

std::unique_ptr<RecordWatch> SqliteTuningStore::WatchRecordChanges(RecordChangeFn) {
  return nullptr;
}

std::string SqliteTuningStore::IntegrityCheck() {
  auto reader = readers_->Acquire();
  return CheckReport(*reader, "PRAGMA integrity_check");
}

}  // namespace tiletune::db
