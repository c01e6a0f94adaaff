// The fleet view: every daemon sharing the database, as of its last
// heartbeat.
#include "db/postgres_columns.h"
#include "db/postgres_tuning_store.h"
#include "db/store_rules.h"

namespace tiletune::db {

void PostgresTuningStore::AnnounceDaemon(const v1::FleetDaemon& daemon) {
  RequireDaemonId(daemon);
  pool_.Acquire()->Exec(
      "INSERT INTO daemons (daemon_id, address, heartbeat_us, daemon) VALUES ($1, $2, $3, $4)"
      " ON CONFLICT (daemon_id) DO UPDATE SET address = excluded.address,"
      " heartbeat_us = excluded.heartbeat_us, daemon = excluded.daemon",
      PgParams(daemon.daemon_id(), daemon.address(), NowMicros(),
               Bytea{daemon.SerializeAsString()}));
}

std::vector<v1::FleetDaemon> PostgresTuningStore::ListDaemons() {
  auto rows = pool_.Acquire()->Exec(
      "SELECT daemon_id, heartbeat_us, daemon FROM daemons ORDER BY daemon_id");
  const int64_t now = NowMicros();
  std::vector<v1::FleetDaemon> daemons;
  for (int row = 0; row < rows.Rows(); ++row) {
    daemons.push_back(
        ListedDaemon(ReadProto<v1::FleetDaemon>(rows, row, 2, name_, "daemon " + rows.Text(row, 0)),
                     rows.Int64(row, 1), now));
  }
  return daemons;
}

}  // namespace tiletune::db
