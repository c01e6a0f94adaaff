#pragma once

#include "db/sqlite_connection.h"

namespace tiletune::db {

// The schema version stored in the file (PRAGMA user_version); 0 for a new
// file.
int StoredSchemaVersion(Connection& connection);

// Throws StoreError when the file was written by a newer tiletuned, before
// anything touches it.
void RefuseNewerSchema(Connection& connection);

// Brings the schema up to SqliteSchemaVersion(), all pending steps in one
// write transaction.
void MigrateSchema(Connection& connection);

}  // namespace tiletune::db
