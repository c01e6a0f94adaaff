#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "db/column_values.h"
#include "db/postgres_connection.h"
#include "db/tuning_store.h"

namespace tiletune::db {

// Nullopt when the column is NULL.
inline std::optional<google::protobuf::Timestamp> ReadTimestamp(const PgResult& rows, int row,
                                                                int column) {
  if (rows.IsNull(row, column)) return std::nullopt;
  return TimestampOfMicros(rows.Int64(row, column));
}

// A whole proto kept in a BYTEA column. `what` names it in the error.
template <typename Message>
Message ReadProto(const PgResult& rows, int row, int column, const std::string& database,
                  std::string_view what) {
  Message message;
  if (!message.ParseFromString(rows.Bytes(row, column))) {
    throw StoreError("database " + database + ": stored " + std::string(what) +
                     " cannot be parsed; it was written by other software");
  }
  return message;
}

}  // namespace tiletune::db
