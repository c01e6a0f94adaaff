// Which engine a db setting names.
#include "db/postgres_connection.h"
#include "db/tuning_store.h"

namespace tiletune::db {

bool IsPostgresUrl(const std::string& db) {
  return db.starts_with("postgresql://") || db.starts_with("postgres://");
}

std::unique_ptr<TuningStore> OpenStore(const StoreOptions& options) {
  if (IsPostgresUrl(options.db)) {
    return OpenPostgresStore({options.db, options.postgres_connections,
                              options.postgres_connect_timeout_seconds, options.postgres_owner,
                              options.postgres_lease_seconds});
  }
  return OpenSqliteStore(
      {options.db, options.sqlite_read_connections, options.sqlite_busy_timeout_ms});
}

std::string DescribeDb(const std::string& db) {
  return IsPostgresUrl(db) ? PostgresDisplayName(db) : db;
}

}  // namespace tiletune::db
