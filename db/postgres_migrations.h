#pragma once

#include "db/postgres_connection.h"

namespace tiletune::db {

// Brings the schema up to PostgresSchemaVersion(), all pending steps in one
// transaction. Daemons starting together take turns (an advisory lock).
// Throws StoreError, changing nothing, when the database was migrated by a
// newer tiletuned.
void MigratePostgresSchema(PgConnection& connection);

}  // namespace tiletune::db
