#include "db/postgres_tuning_store.h"

#include <unistd.h>

#include <array>
#include <stdexcept>

#include "db/column_values.h"
#include "db/device_upsert_statement.h"
#include "db/postgres_migrations.h"
#include "db/postgres_record_listener.h"
#include "db/store_rules.h"

namespace tiletune::db {

std::unique_ptr<TuningStore> OpenPostgresStore(const PostgresOptions& options) {
  return std::make_unique<PostgresTuningStore>(options);
}

std::string HostName() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "localhost";
  return name.data();
}

namespace {

int64_t LeaseMicros(int lease_seconds) {
  if (lease_seconds <= 0) throw std::invalid_argument("lease_seconds must be positive");
  return int64_t{lease_seconds} * 1000000;
}

}  // namespace

PostgresTuningStore::PostgresTuningStore(const PostgresOptions& options)
    : url_(options.url),
      connect_timeout_seconds_(options.connect_timeout_seconds),
      pool_(options.url, options.connections, options.connect_timeout_seconds,
            [this](const StoreUnwritable* refused) { ReportWrite(refused); }),
      name_(PostgresDisplayName(options.url)),
      owner_(options.owner.empty() ? HostName() : options.owner),
      lease_micros_(LeaseMicros(options.lease_seconds)) {
  MigratePostgresSchema(*pool_.Acquire());
}

void PostgresTuningStore::UpsertDevice(const v1::DeviceFingerprint& device,
                                       const v1::Toolchain& toolchain) {
  RequireDeviceClass(device);
  static const std::string sql = PgPlaceholders(kUpsertDeviceSql);
  pool_.Acquire()->Exec(
      sql, WithUpsertDeviceValues(device, toolchain, NowMicros(),
                                  [](const auto&... values) { return PgParams(values...); }));
}

void PostgresTuningStore::UpsertKernel(const std::string& source_hash,
                                       const std::string& kernel_name,
                                       const std::string& library_version,
                                       const std::string& source) {
  RequireSourceHash(source_hash);
  pool_.Acquire()->Exec(
      "INSERT INTO kernels (source_hash, kernel_name, library_version, source, created_at_us)"
      " VALUES ($1, $2, $3, $4, $5)"
      " ON CONFLICT (source_hash) DO UPDATE SET kernel_name = excluded.kernel_name,"
      " library_version = excluded.library_version, source = excluded.source",
      PgParams(source_hash, kernel_name, library_version, source, NowMicros()));
}

std::unique_ptr<RecordWatch> PostgresTuningStore::WatchRecordChanges(RecordChangeFn on_change) {
  return std::make_unique<PostgresRecordListener>(url_, connect_timeout_seconds_,
                                                  std::move(on_change));
}

std::string PostgresTuningStore::IntegrityCheck() {
  auto connection = pool_.Acquire();
  auto row = connection->Exec("SELECT max(version) FROM schema_version");
  if (row.IsNull(0, 0) || row.Int64(0, 0) != PostgresSchemaVersion()) {
    return "schema version is not " + std::to_string(PostgresSchemaVersion());
  }
  return "ok";
}

}  // namespace tiletune::db
