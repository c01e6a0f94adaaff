#include "server/fleet_heartbeat.h"

#include <condition_variable>
#include <mutex>

#include <spdlog/spdlog.h>

namespace tiletune::server {

FleetHeartbeat::FleetHeartbeat(db::TuningStore& store, const DeviceRegistry& devices,
                               DatabaseHealth& database, v1::FleetDaemon self,
                               double interval_seconds, double write_retry_seconds)
    : store_(store), devices_(devices), database_(database), self_(std::move(self)) {
  Announce();
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(interval_seconds * 1000));
  const auto write_retry =
      std::chrono::milliseconds(static_cast<int64_t>(write_retry_seconds * 1000));
  thread_ = std::jthread([this, interval, write_retry](std::stop_token stop) {
    std::mutex mu;
    std::condition_variable_any wake;
    std::unique_lock lock(mu);
    for (;;) {
      auto wait = interval;
      if (!database_.reachable()) wait = std::min(wait, kProbeWhileUnreachable);
      if (!database_.writable()) wait = std::min(wait, write_retry);
      if (wake.wait_for(lock, stop, wait, [] { return false; }) || stop.stop_requested()) return;
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
    database_.Reachable();
  } catch (const db::StoreUnreachable& e) {
    database_.Unreachable(e.what());
  } catch (const db::StoreUnwritable&) {
    // Told to database_ by the store, and logged there once.
  } catch (const db::StoreError& e) {
    // A missed beat only ages this daemon's row; the next one may land.
    spdlog::warn("fleet heartbeat not stored: {}", e.what());
  }
}

}  // namespace tiletune::server
