#pragma once

#include <set>
#include <string>
#include <vector>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// Marks the daemons whose last heartbeat is older than `gone_after_seconds`
// as gone (FleetDaemon.gone); they stay listed.
void MarkGoneDaemons(std::vector<v1::FleetDaemon>& daemons, double gone_after_seconds);

// The device classes of the daemons not gone: the job queues some daemon
// of the fleet is taking work from.
std::set<std::string> ServedDeviceClasses(const std::vector<v1::FleetDaemon>& daemons);

}  // namespace tiletune::server
