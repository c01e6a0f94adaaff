#include "db/sqlite_columns.h"

#include <google/protobuf/util/time_util.h>

namespace tiletune::db {

using google::protobuf::util::TimeUtil;

int64_t NowMicros() {
  return TimeUtil::TimestampToMicroseconds(TimeUtil::GetCurrentTime());
}

std::optional<int64_t> MicrosOf(bool present, const google::protobuf::Timestamp& timestamp) {
  if (!present) return std::nullopt;
  return TimeUtil::TimestampToMicroseconds(timestamp);
}

std::optional<google::protobuf::Timestamp> ReadTimestamp(const Statement& row, int column) {
  if (row.IsNull(column)) return std::nullopt;
  return TimeUtil::MicrosecondsToTimestamp(row.Int64(column));
}

}  // namespace tiletune::db
