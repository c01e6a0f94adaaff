// Failure memory: variants that hung, crashed or gave wrong results, keyed by
// kernel template, params, device class and toolchain fingerprint.
#include "db/sqlite_columns.h"
#include "db/sqlite_tuning_store.h"

namespace tiletune::db {

void SqliteTuningStore::RememberFailure(const KnownFailure& failure) {
  writer_->Run([&](Connection& connection) {
    connection
        .Prepare(
            "INSERT OR IGNORE INTO known_failures (kernel_name, params, device_class, toolchain,"
            " status, error, canonical_key, job_id, first_seen_us)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .Bind(failure.kernel_name, failure.params, failure.device_class, failure.toolchain,
              failure.status, failure.error, failure.canonical_key, failure.job_id, NowMicros())
        .Run();
  });
}

std::map<std::string, v1::TrialStatus> SqliteTuningStore::KnownFailures(
    const std::string& kernel_name, const std::string& device_class, const std::string& toolchain) {
  auto reader = readers_->Acquire();
  auto rows = reader->Prepare(
      "SELECT params, status FROM known_failures"
      " WHERE kernel_name = ? AND device_class = ? AND toolchain = ?");
  rows.Bind(kernel_name, device_class, toolchain);
  std::map<std::string, v1::TrialStatus> failures;
  while (rows.Step()) failures[rows.Text(0)] = static_cast<v1::TrialStatus>(rows.Int64(1));
  return failures;
}

}  // namespace tiletune::db
