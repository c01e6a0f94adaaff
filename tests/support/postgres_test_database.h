#pragma once

#include <optional>
#include <string>

struct pg_conn;  // libpq's PGconn

namespace tiletune::testing {

// The superuser URL of the test cluster (tests/postgres-cluster.sh), from
// TILETUNE_TEST_POSTGRES_URL; nullopt when unset.
std::optional<std::string> PostgresAdminUrl();

// What a PostgreSQL test prints when it skips for want of a cluster.
inline constexpr const char* kNoPostgresCluster =
    "TILETUNE_TEST_POSTGRES_URL is not set; run eval \"$(bash tests/postgres-cluster.sh start)\" "
    "first (tests/run-all.sh does)";

// A database of its own for one test, created on the test cluster with a
// name no concurrent test process uses, and dropped (with any connection
// still open to it) at destruction.
class PostgresTestDatabase {
 public:
  explicit PostgresTestDatabase(const std::string& admin_url);
  PostgresTestDatabase(const PostgresTestDatabase&) = delete;
  PostgresTestDatabase& operator=(const PostgresTestDatabase&) = delete;
  ~PostgresTestDatabase();

  // A URL to this database, with the admin URL's credentials.
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

  // Runs `sql` on this database over a connection of its own and returns
  // the first column of the first row as text ("" when there is none).
  // Fails the test on an error.
  std::string Query(const std::string& sql) const;

 private:
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

// Runs `sql` over a fresh connection to `url`; the first column of the first
// row as text, or "" (the test fails on an error).
std::string QueryPostgres(const std::string& url, const std::string& sql);

// A connection to `url` kept open, for a test that holds a transaction (and
// its row locks) while daemons work.
class PostgresSession {
 public:
  explicit PostgresSession(const std::string& url);
  PostgresSession(const PostgresSession&) = delete;
  PostgresSession& operator=(const PostgresSession&) = delete;
  ~PostgresSession();

  // As QueryPostgres, on this connection.
  std::string Query(const std::string& sql);

 private:
  pg_conn* conn_;
};

}  // namespace tiletune::testing
