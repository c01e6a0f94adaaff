#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "db/column_values.h"
#include "db/sqlite_connection.h"
#include "db/tuning_store.h"

namespace tiletune::db {

// Nullopt when the column is NULL.
std::optional<google::protobuf::Timestamp> ReadTimestamp(const Statement& row, int column);

// A whole proto kept in a BLOB column. `what` names it in the error.
template <typename Message>
Message ReadProto(const Statement& row, int column, std::string_view what) {
  Message message;
  if (!message.ParseFromString(row.Bytes(column))) {
    throw StoreError("database " + row.database_path() + ": stored " + std::string(what) +
                     " cannot be parsed; the file is damaged or was written by other software");
  }
  return message;
}

}  // namespace tiletune::db
