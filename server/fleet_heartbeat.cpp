#include "server/fleet_heartbeat.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <spdlog/spdlog.h>

namespace tiletune::server {

FleetHeartbeat::FleetHeartbeat(db::TuningStore& store, const DeviceRegistry& devices,
                               v1::FleetDaemon self, double interval_seconds)
    : store_(store), devices_(devices), self_(std::move(self)) {
  Announce();
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(interval_seconds * 1000));
  thread_ = std::jthread([this, interval](std::stop_token stop) {
    std::mutex mu;
    std::condition_variable_any wake;
    std::unique_lock lock(mu);
    while (!wake.wait_for(lock, stop, interval, [] { return false; }) && !stop.stop_requested()) {
      Announce();
    }
  });
}

v1::FleetDaemon FleetHeartbeat::Snapshot() const {
  v1::FleetDaemon daemon = self_;
  for (const auto& d : devices_.devices()) *daemon.add_devices() = devices_.ToProto(*d);
  return daemon;
}

void FleetHeartbeat::Announce() const {
  try {
    store_.AnnounceDaemon(Snapshot());
  } catch (const db::StoreError& e) {
    // A missed beat only ages this daemon's row; the next one may land.
    spdlog::warn("fleet heartbeat not stored: {}", e.what());
  }
}

}  // namespace tiletune::server
