#pragma once

#include <chrono>
#include <thread>

#include "db/tuning_store.h"
#include "server/database_health.h"
#include "server/device_registry.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// Announces this daemon to the tuning database (TuningStore::AnnounceDaemon)
// at start and then every `interval_seconds` on a thread of its own, with
// its devices as they are at that moment (state, running job), so that every
// daemon sharing the database can list the fleet and see who went silent.
// Each beat also tells `database` whether the database answered (and, as
// a write, whether it takes writes: TuningStore::ReportWrites); while it
// does not answer, beats come every kProbeWhileUnreachable, while it
// refuses writes every `write_retry_seconds`, so that the daemon notices
// soon after it is back.
class FleetHeartbeat {
 public:
  // `self` holds what does not change: id, address, version, start time.
  FleetHeartbeat(db::TuningStore& store, const DeviceRegistry& devices, DatabaseHealth& database,
                 v1::FleetDaemon self, double interval_seconds, double write_retry_seconds);
  // Stops beating; the row stays and ages, which is how others see it gone.
  ~FleetHeartbeat() = default;

 private:
  static constexpr std::chrono::milliseconds kProbeWhileUnreachable{500};

  // This daemon as it is now.
  v1::FleetDaemon Snapshot() const;
  void Announce() const;

  db::TuningStore& store_;
  const DeviceRegistry& devices_;
  DatabaseHealth& database_;
  const v1::FleetDaemon self_;
  std::jthread thread_;
};

}  // namespace tiletune::server
