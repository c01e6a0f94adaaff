#pragma once

#include <atomic>

#include <google/protobuf/timestamp.pb.h>

#include "db/tuning_store.h"
#include "server/daemon_config.h"
#include "server/daemon_metrics.h"
#include "server/database_health.h"
#include "server/device_registry.h"
#include "server/job_event_hub.h"
#include "server/lookup_cache.h"
#include "server/miss_counter.h"

namespace tiletune::server {

class ArtifactSigner;
class CallAuthorizer;
class JobScheduler;

// What the RPCs and the lookup resolver share of the daemon: its config,
// devices, cache, metrics and database, and whether it serves yet. No gRPC
// type appears here, so that the lookup policy can be used and tested
// without a server. `store` is null until the database is open; calls
// answer UNAVAILABLE until `ready`.
struct ServiceContext {
  const DaemonConfig& config;
  DeviceRegistry& devices;
  LookupCache& cache;
  JobEventHub& events;
  DaemonMetrics& metrics;
  DatabaseHealth& database;
  MissCounter misses{config.max_missed_keys};
  db::TuningStore* store = nullptr;
  JobScheduler* scheduler = nullptr;
  // Null: every call is open.
  const CallAuthorizer* authorizer = nullptr;
  // Signs the kernels GetKernel serves; null only in tests without keys.
  const ArtifactSigner* signer = nullptr;
  std::atomic<bool> ready{false};
  std::atomic<bool> draining{false};
  google::protobuf::Timestamp started_at;
};

}  // namespace tiletune::server
