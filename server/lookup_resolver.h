#pragma once

#include <optional>
#include <string>

#include "kernels/core/kernel_key.h"
#include "server/device_registry.h"
#include "server/lookup_cache.h"
#include "server/service_context.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// How a lookup is answered, free of gRPC: the cache first, then the store
// (filling the cache), a record's staleness against the device's toolchain
// (a stale one queues one re-tune), and on a miss the vendor library as the
// fallback, with a tune-on-miss job queued when asked: counted as a miss,
// one job per key however many lookups flood it, on a device here or, in
// fleet mode, on a class a live daemon serves. While the database is
// unreachable a lookup the cache cannot answer gets the fallback at once.
// An op graph is answered by its fusion plan, kernel by kernel.
class LookupResolver {
 public:
  explicit LookupResolver(ServiceContext& context) : ctx_(context) {}

  // Fills `response`, or returns what is wrong with the request (fields
  // named after `prefix`); counted in the lookup metrics and timed. Storage
  // errors other than an unreachable database propagate.
  std::optional<kernels::FieldError> Resolve(const v1::LookupRequest& request,
                                             v1::LookupResponse& response,
                                             const std::string& prefix = "");
  // As Resolve, but the record served (on a HIT, and on a MISS whose record
  // says VENDOR) is left out of `response` and handed back in `record`,
  // with its encoding, for the reply to append without copying it; null
  // when none is served. An op graph's kernel answers carry their records.
  std::optional<kernels::FieldError> ResolveApart(const v1::LookupRequest& request,
                                                  v1::LookupResponse& response,
                                                  LookupCache::Entry& record);

 private:
  ServiceContext& ctx_;
};

// Whether `record` was measured with another toolchain than `device` runs;
// never stale without a device to judge against.
v1::Staleness StalenessOf(const v1::Record& record, const ManagedDevice* device);

}  // namespace tiletune::server
