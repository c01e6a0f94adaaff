#pragma once

#include <map>

#include "server/metrics_registry.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::server {

// The daemon's own counters and histograms, created once at start so the hot
// paths only touch atomics. Gauges that read the database or device states
// are added by the parts that own them.
struct DaemonMetrics {
  explicit DaemonMetrics(MetricsRegistry& registry);

  MetricsRegistry& registry;
  Counter& lookups_hit;
  Counter& lookups_miss;
  Counter& lookups_invalid;
  Histogram& lookup_seconds;
  Counter& jobs_submitted;
  Counter& records_imported;
  Counter& compile_cache_hits;
  Counter& compile_cache_misses;
  std::map<v1::TrialStatus, Counter*> trials;
};

}  // namespace tiletune::server
