#pragma once

#include <google/protobuf/map.h>
#include <google/protobuf/timestamp.pb.h>

#include <cstdint>
#include <optional>
#include <string>

#include "tiletune/v1/jobs.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::db {

// How both engines store values that are not whole protos: timestamps as
// unix microseconds (an unset one is NULL), trial params as JSON.
int64_t NowMicros();
std::optional<int64_t> MicrosOf(bool present, const google::protobuf::Timestamp& timestamp);
google::protobuf::Timestamp TimestampOfMicros(int64_t micros);

// Sorted keys, so equal parameter sets are equal strings.
std::string ParamsJson(const google::protobuf::Map<std::string, int64_t>& params);

// A trial's or record's roofline as columns, for ad-hoc SQL: NULL when it has
// none (not timed, or stored before rooflines were kept); the fraction also
// NULL when the device's ceilings are unknown.
struct RooflineColumns {
  std::optional<double> achieved_tflops;
  std::optional<double> achieved_tbps;
  std::optional<double> fraction;
};
RooflineColumns RooflineColumnsOf(bool present, const v1::Roofline& roofline);

// A record's provenance as columns, for ad-hoc SQL: its trust (v1.Trust;
// 0, measured, in rows stored before provenance was kept) and, for imported
// records, when and from which daemon (NULL otherwise).
struct ProvenanceColumns {
  int trust = 0;
  std::optional<int64_t> imported_at_us;
  std::optional<std::string> source_daemon;
};
ProvenanceColumns ProvenanceColumnsOf(const v1::Record& record);

// A job's request id, NULL when it has none: NULLs never collide under the
// UNIQUE (submitted_by, request_id) of the jobs table.
std::optional<std::string> RequestIdColumn(const v1::Job& job);

}  // namespace tiletune::db
