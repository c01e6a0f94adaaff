#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/service/latency_summary.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::bench {

struct LoadOptions {
  size_t clients = 16;  // lookups in flight at any time
  std::chrono::duration<double> duration = std::chrono::seconds(10);
  std::chrono::milliseconds call_deadline{1000};  // of each Lookup call
  // Each client keeps one LookupStream open and one lookup in flight on it,
  // instead of one Lookup call after another.
  bool stream = false;
};

struct LoadResult {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;         // calls that ended with a non-OK status
  std::string first_error;     // the first of them, for the report
  double elapsed_seconds = 0;  // until the last call in flight came back
  LatencySummary latency;      // of the answered (hit or miss) lookups
  uint64_t answered() const { return hits + misses; }
};

// Keeps `clients` lookups in flight for `duration` through gRPC's callback
// API: each answered lookup records its latency and starts the next, so one
// process loads the daemon without a thread per client. Client i cycles
// through `requests` starting at key i.
LoadResult RunLookupLoad(v1::TuningService::Stub& stub,
                         const std::vector<v1::LookupRequest>& requests,
                         const LoadOptions& options);

}  // namespace tiletune::bench
