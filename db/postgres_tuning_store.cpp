#include "db/postgres_tuning_store.h"

#include <unistd.h>

#include <array>
#include <stdexcept>

#include "db/column_values.h"
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
      pool_(options.url, options.connections, options.connect_timeout_seconds),
      name_(PostgresDisplayName(options.url)),
      owner_(options.owner.empty() ? HostName() : options.owner),
      lease_micros_(LeaseMicros(options.lease_seconds)) {
  MigratePostgresSchema(*pool_.Acquire());
}

void PostgresTuningStore::UpsertDevice(const v1::DeviceFingerprint& device,
                                       const v1::Toolchain& toolchain) {
  RequireDeviceClass(device);
  pool_.Acquire()->Exec(
      "INSERT INTO devices (device_class, vendor, arch, name, compute_units, memory_bytes,"
      " l2_bytes, clock_mhz, driver_version, runtime_version, compiler_version,"
      " kernel_library_version, first_seen_us, last_seen_us)"
      " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)"
      " ON CONFLICT (device_class) DO UPDATE SET vendor = excluded.vendor,"
      " arch = excluded.arch, name = excluded.name, compute_units = excluded.compute_units,"
      " memory_bytes = excluded.memory_bytes, l2_bytes = excluded.l2_bytes,"
      " clock_mhz = excluded.clock_mhz, driver_version = excluded.driver_version,"
      " runtime_version = excluded.runtime_version,"
      " compiler_version = excluded.compiler_version,"
      " kernel_library_version = excluded.kernel_library_version,"
      " last_seen_us = excluded.last_seen_us",
      PgParams(device.device_class(), device.vendor(), device.arch(), device.name(),
               device.compute_units(), device.memory_bytes(), device.l2_bytes(), device.clock_mhz(),
               toolchain.driver_version(), toolchain.runtime_version(),
               toolchain.compiler_version(), toolchain.kernel_library_version(), NowMicros()));
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
