#include "server/fleet_view.h"

namespace tiletune::server {

std::vector<v1::FleetDaemon> ListFleet(db::TuningStore& store, double gone_after_seconds) {
  auto daemons = store.ListDaemons();
  for (auto& daemon : daemons) {
    daemon.set_gone(daemon.heartbeat_age_seconds() > gone_after_seconds);
  }
  return daemons;
}

std::set<std::string> ServedDeviceClasses(const std::vector<v1::FleetDaemon>& daemons) {
  std::set<std::string> classes;
  for (const auto& daemon : daemons) {
    if (daemon.gone()) continue;
    for (const auto& device : daemon.devices()) {
      // A quarantined device claims nothing until its daemon restarts.
      if (device.state() != v1::Device::STATE_QUARANTINED) {
        classes.insert(device.fingerprint().device_class());
      }
    }
  }
  return classes;
}

}  // namespace tiletune::server
