#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

#include "server/metrics_registry.h"
#include "tiletune/v1/jobs.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::server {

// One TuningService method's call metrics: a counter per gRPC status code
// and a latency histogram, created at start so that a call only touches
// atomics.
struct RpcMetrics {
  static constexpr int kStatusCodes = 17;  // grpc::StatusCode OK .. UNAUTHENTICATED
  std::array<Counter*, kStatusCodes> answered{};
  Histogram* seconds = nullptr;

  void Observe(int status_code, double elapsed_seconds) const;
};

// The daemon's own counters and histograms, created once at start so the hot
// paths only touch atomics. Gauges that read the database or device states
// are added by the parts that own them.
struct DaemonMetrics {
  explicit DaemonMetrics(MetricsRegistry& registry);

  // The call metrics of a TuningService method; null for another name.
  const RpcMetrics* Rpc(std::string_view method) const;

  MetricsRegistry& registry;
  Counter& lookups_hit;
  Counter& lookups_miss;
  Counter& lookups_invalid;
  Histogram& lookup_seconds;
  Counter& jobs_submitted;
  std::map<v1::JobState, Counter*> jobs_finished;  // JOB_SUCCEEDED, JOB_FAILED
  Counter& records_imported;
  Counter& compile_cache_hits;
  Counter& compile_cache_misses;
  std::map<v1::TrialStatus, Counter*> trials;

 private:
  std::map<std::string, RpcMetrics, std::less<>> rpcs_;
};

// A label value for an enum value's name: lower-case, without the prefix
// its enum gives every name ("JOB_SUCCEEDED", "JOB_" → "succeeded").
std::string EnumLabel(std::string_view name, std::string_view prefix);

}  // namespace tiletune::server
