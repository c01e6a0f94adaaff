#include "db/column_values.h"

#include <google/protobuf/util/time_util.h>
#include <nlohmann/json.hpp>

#include <chrono>

namespace tiletune::db {

using google::protobuf::util::TimeUtil;

int64_t NowMicros() {
  // Not TimeUtil::GetCurrentTime: protobuf 3.21 reads it with time(), whole
  // seconds, too coarse for heartbeat ages and lease deadlines.
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<int64_t> MicrosOf(bool present, const google::protobuf::Timestamp& timestamp) {
  if (!present) return std::nullopt;
  return TimeUtil::TimestampToMicroseconds(timestamp);
}

google::protobuf::Timestamp TimestampOfMicros(int64_t micros) {
  return TimeUtil::MicrosecondsToTimestamp(micros);
}

std::string ParamsJson(const google::protobuf::Map<std::string, int64_t>& params) {
  // nlohmann::json objects are sorted maps.
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : params) json[name] = value;
  return json.dump();
}

RooflineColumns RooflineColumnsOf(bool present, const v1::Roofline& roofline) {
  if (!present) return {};
  return {roofline.achieved_tflops(), roofline.achieved_tbps(),
          roofline.has_ceilings() ? std::optional(roofline.fraction_of_floor()) : std::nullopt};
}

ProvenanceColumns ProvenanceColumnsOf(const v1::Record& record) {
  const v1::Provenance& provenance = record.provenance();
  if (!provenance.has_imported_at()) return {.trust = provenance.trust()};
  return {.trust = provenance.trust(),
          .imported_at_us = MicrosOf(true, provenance.imported_at()),
          .source_daemon = provenance.source_daemon()};
}

std::optional<std::string> RequestIdColumn(const v1::Job& job) {
  if (job.request_id().empty()) return std::nullopt;
  return job.request_id();
}

}  // namespace tiletune::db
