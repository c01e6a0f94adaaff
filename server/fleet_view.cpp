#include "server/fleet_view.h"

namespace tiletune::server {

void MarkGoneDaemons(std::vector<v1::FleetDaemon>& daemons, double gone_after_seconds) {
  for (auto& daemon : daemons) {
    daemon.set_gone(daemon.heartbeat_age_seconds() > gone_after_seconds);
  }
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
