#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "db/tuning_store.h"
#include "tests/support/postgres_test_database.h"

namespace tiletune::db {

// The first column of the first row of `sql` on the SQLite file at `path`,
// read with a connection of our own rather than through the store.
inline std::string QuerySqlite(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

// SQLite-only tests (files, WAL, durability): each test gets a fresh
// directory and a database path inside it.
class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "tiletune-db-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "tiletune.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<TuningStore> Open(int read_connections = 2) {
    SqliteOptions options;
    options.path = path_;
    options.read_connections = read_connections;
    return OpenSqliteStore(options);
  }

  std::string Query(const std::string& sql) const { return QuerySqlite(path_, sql); }

  std::filesystem::path dir_;
  std::string path_;
};

// PostgreSQL-only tests: each test gets a database of its own on the test
// cluster, or skips when there is none.
class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto admin = testing::PostgresAdminUrl();
    if (!admin) GTEST_SKIP() << testing::kNoPostgresCluster;
    database_.emplace(*admin);
  }

  std::unique_ptr<TuningStore> Open(int connections = 2) {
    PostgresOptions options;
    options.url = database_->url();
    options.connections = connections;
    return OpenPostgresStore(options);
  }

  std::string Query(const std::string& sql) const { return database_->Query(sql); }

  std::optional<testing::PostgresTestDatabase> database_;
};

enum class Engine { kSqlite, kPostgres };

// Behaviour every TuningStore must share: the test runs once per engine,
// each time on a fresh database (a file in a temp directory, or a database
// of its own on the PostgreSQL test cluster, skipped when there is none).
class StoreTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == Engine::kPostgres) {
      auto admin = testing::PostgresAdminUrl();
      if (!admin) GTEST_SKIP() << testing::kNoPostgresCluster;
      postgres_.emplace(*admin);
      return;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "tiletune-db-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<TuningStore> Open(int connections = 2) {
    if (postgres_) return OpenPostgresStore({postgres_->url(), connections});
    return OpenSqliteStore({(dir_ / "tiletune.db").string(), connections});
  }

  // The first column of the first row of `sql` (SQL both engines accept),
  // read over a connection of our own rather than through the store.
  std::string Query(const std::string& sql) const {
    if (postgres_) return postgres_->Query(sql);
    return QuerySqlite((dir_ / "tiletune.db").string(), sql);
  }

 private:
  std::filesystem::path dir_;
  std::optional<testing::PostgresTestDatabase> postgres_;
};

// Test names and ctest names say the engine.
inline void PrintTo(Engine engine, std::ostream* out) {
  *out << (engine == Engine::kSqlite ? "Sqlite" : "Postgres");
}

inline std::string EngineName(const ::testing::TestParamInfo<Engine>& info) {
  return info.param == Engine::kSqlite ? "Sqlite" : "Postgres";
}

// Runs every TEST_P of `suite` on both engines.
#define TILETUNE_STORE_TEST_SUITE(suite)                                                     \
  INSTANTIATE_TEST_SUITE_P(                                                                  \
      Engines, suite,                                                                        \
      ::testing::Values(::tiletune::db::Engine::kSqlite, ::tiletune::db::Engine::kPostgres), \
      ::tiletune::db::EngineName)

}  // namespace tiletune::db
