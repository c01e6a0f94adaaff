#pragma once

#include <set>
#include <string>
#include <vector>

#include "db/tuning_store.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// Every daemon of the database, those whose last heartbeat is older than
// `gone_after_seconds` marked gone (FleetDaemon.gone); they stay listed.
std::vector<v1::FleetDaemon> ListFleet(db::TuningStore& store, double gone_after_seconds);

// The device classes of the daemons not gone: the job queues some daemon
// of the fleet is taking work from.
std::set<std::string> ServedDeviceClasses(const std::vector<v1::FleetDaemon>& daemons);

}  // namespace tiletune::server
