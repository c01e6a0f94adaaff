#pragma once

#include <thread>

#include "db/tuning_store.h"
#include "server/device_registry.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// Announces this daemon to the tuning database (TuningStore::AnnounceDaemon)
// at start and then every `interval_seconds` on a thread of its own, with
// its devices as they are at that moment (state, running job), so that every
// daemon sharing the database can list the fleet and see who went silent.
class FleetHeartbeat {
 public:
  // `self` holds what does not change: id, address, version, start time.
  FleetHeartbeat(db::TuningStore& store, const DeviceRegistry& devices, v1::FleetDaemon self,
                 double interval_seconds);
  // Stops beating; the row stays and ages, which is how others see it gone.
  ~FleetHeartbeat() = default;

 private:
  // This daemon as it is now.
  v1::FleetDaemon Snapshot() const;
  void Announce() const;

  db::TuningStore& store_;
  const DeviceRegistry& devices_;
  const v1::FleetDaemon self_;
  std::jthread thread_;
};

}  // namespace tiletune::server
