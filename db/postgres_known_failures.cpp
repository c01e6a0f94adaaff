// Failure memory: variants that hung, crashed or gave wrong results, keyed by
// kernel template, params, device class and toolchain fingerprint.
#include "db/postgres_columns.h"
#include "db/postgres_tuning_store.h"

namespace tiletune::db {

void PostgresTuningStore::RememberFailure(const KnownFailure& failure) {
  pool_.Acquire()->Exec(
      "INSERT INTO known_failures (kernel_name, params, device_class, toolchain, status, error,"
      " canonical_key, job_id, first_seen_us) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
      " ON CONFLICT DO NOTHING",
      PgParams(failure.kernel_name, failure.params, failure.device_class, failure.toolchain,
               failure.status, failure.error, failure.canonical_key, failure.job_id, NowMicros()));
}

std::map<std::string, v1::TrialStatus> PostgresTuningStore::KnownFailures(
    const std::string& kernel_name, const std::string& device_class, const std::string& toolchain) {
  auto rows = pool_.Acquire()->Exec(
      "SELECT params, status FROM known_failures"
      " WHERE kernel_name = $1 AND device_class = $2 AND toolchain = $3",
      PgParams(kernel_name, device_class, toolchain));
  std::map<std::string, v1::TrialStatus> failures;
  for (int row = 0; row < rows.Rows(); ++row) {
    failures[rows.Text(row, 0)] = static_cast<v1::TrialStatus>(rows.Int64(row, 1));
  }
  return failures;
}

}  // namespace tiletune::db
