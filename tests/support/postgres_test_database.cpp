#include "tests/support/postgres_test_database.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace tiletune::testing {
namespace {

// The admin URL with its database replaced by `dbname`. Only the URL form
// (postgresql://.../DBNAME[?params]) is supported: the cluster script
// prints one.
std::string WithDatabase(const std::string& admin_url, const std::string& dbname) {
  auto authority = admin_url.find("://");
  auto slash = admin_url.find('/', authority == std::string::npos ? 0 : authority + 3);
  if (authority == std::string::npos || slash == std::string::npos) {
    throw std::invalid_argument("TILETUNE_TEST_POSTGRES_URL: expected postgresql://HOST/DB, got " +
                                admin_url);
  }
  auto query = admin_url.find('?', slash);
  std::string rest = query == std::string::npos ? "" : admin_url.substr(query);
  return admin_url.substr(0, slash + 1) + dbname + rest;
}

}  // namespace

std::optional<std::string> PostgresAdminUrl() {
  const char* url = std::getenv("TILETUNE_TEST_POSTGRES_URL");
  if (url == nullptr || *url == '\0') return std::nullopt;
  return std::string(url);
}

std::string QueryPostgres(const std::string& url, const std::string& sql) {
  return PostgresSession(url).Query(sql);
}

PostgresSession::PostgresSession(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
  if (PQstatus(conn_) != CONNECTION_OK) {
    ADD_FAILURE() << "cannot connect to the test cluster: " << PQerrorMessage(conn_);
  }
}

PostgresSession::~PostgresSession() {
  PQfinish(conn_);
}

std::string PostgresSession::Query(const std::string& sql) {
  if (PQstatus(conn_) != CONNECTION_OK) return "";
  std::string value;
  PGresult* result = PQexec(conn_, sql.c_str());
  auto status = PQresultStatus(result);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    ADD_FAILURE() << sql << ": " << PQresultErrorMessage(result);
  } else if (PQntuples(result) > 0 && PQnfields(result) > 0 && !PQgetisnull(result, 0, 0)) {
    value = PQgetvalue(result, 0, 0);
  }
  PQclear(result);
  return value;
}

PostgresTestDatabase::PostgresTestDatabase(const std::string& admin_url) : admin_url_(admin_url) {
  // The pid tells concurrent test processes apart, the counter the
  // databases of one process.
  static std::atomic<int> counter = 0;
  name_ = "tiletune_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  url_ = WithDatabase(admin_url_, name_);
  QueryPostgres(admin_url_, "CREATE DATABASE " + name_);
}

PostgresTestDatabase::~PostgresTestDatabase() {
  QueryPostgres(admin_url_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
}

std::string PostgresTestDatabase::Query(const std::string& sql) const {
  return QueryPostgres(url_, sql);
}

}  // namespace tiletune::testing
