// The fleet view on one node: the daemons table holds this daemon alone.
#include "db/sqlite_columns.h"
#include "db/sqlite_tuning_store.h"
#include "db/store_rules.h"

namespace tiletune::db {

void SqliteTuningStore::AnnounceDaemon(const v1::FleetDaemon& daemon) {
  RequireDaemonId(daemon);
  writer_->Run([&](Connection& connection) {
    connection
        .Prepare(
            "INSERT INTO daemons (daemon_id, address, heartbeat_us, daemon) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (daemon_id) DO UPDATE SET address = excluded.address,"
            " heartbeat_us = excluded.heartbeat_us, daemon = excluded.daemon")
        .Bind(daemon.daemon_id(), daemon.address(), NowMicros(), Blob{daemon.SerializeAsString()})
        .Run();
  });
}

std::vector<v1::FleetDaemon> SqliteTuningStore::ListDaemons() {
  auto reader = readers_->Acquire();
  auto rows =
      reader->Prepare("SELECT daemon_id, heartbeat_us, daemon FROM daemons ORDER BY daemon_id");
  const int64_t now = NowMicros();
  std::vector<v1::FleetDaemon> daemons;
  while (rows.Step()) {
    daemons.push_back(ListedDaemon(ReadProto<v1::FleetDaemon>(rows, 2, "daemon " + rows.Text(0)),
                                   rows.Int64(1), now));
  }
  return daemons;
}

}  // namespace tiletune::db
