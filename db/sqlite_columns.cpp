#include "db/sqlite_columns.h"

namespace tiletune::db {

std::optional<google::protobuf::Timestamp> ReadTimestamp(const Statement& row, int column) {
  if (row.IsNull(column)) return std::nullopt;
  return TimestampOfMicros(row.Int64(column));
}

}  // namespace tiletune::db
