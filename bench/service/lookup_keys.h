#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::bench {

struct LookupKeys {
  std::vector<v1::LookupRequest> requests;
  // True when the keys come from the daemon's records (lookups should HIT),
  // false when they are synthetic (lookups will MISS).
  bool from_records = false;
};

// Up to `count` keys read with ListRecords, each asked on its record's device
// class, so the load measures hits without writing anything. When the daemon
// has no records: `count` synthetic f32 gemm keys (m = 16, 32, 48, ...,
// n = k = 256). Throws std::runtime_error when ListRecords fails.
LookupKeys ChooseLookupKeys(v1::TuningService::Stub& stub, size_t count,
                            std::chrono::milliseconds timeout);

}  // namespace tiletune::bench
