#include "db/sqlite_connection.h"

#include <sqlite3.h>

#include <utility>

#include "db/tuning_store.h"

namespace tiletune::db {

Statement::Statement(Connection& owner, sqlite3_stmt* stmt, std::string sql)
    : owner_(&owner), stmt_(stmt), sql_(std::move(sql)) {}

Statement::Statement(Statement&& other) noexcept
    : owner_(other.owner_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      sql_(std::move(other.sql_)) {}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  owner_->Return(std::move(sql_), stmt_);
}

void Statement::CheckBind(int rc) const {
  if (rc != SQLITE_OK) owner_->Fail("a bind of `" + sql_ + "`");
}

void Statement::BindInt64(int index, int64_t value) {
  CheckBind(sqlite3_bind_int64(stmt_, index, value));
}

void Statement::BindAt(int index, double value) {
  CheckBind(sqlite3_bind_double(stmt_, index, value));
}

namespace {

// SQLite binds NULL for a null pointer, even with a length of zero.
const char* NonNull(std::string_view bytes) {
  static constexpr char kEmpty = 0;
  return bytes.data() == nullptr ? &kEmpty : bytes.data();
}

}  // namespace

void Statement::BindAt(int index, std::string_view text) {
  CheckBind(
      sqlite3_bind_text64(stmt_, index, NonNull(text), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}

void Statement::BindAt(int index, Blob blob) {
  CheckBind(
      sqlite3_bind_blob64(stmt_, index, NonNull(blob.bytes), blob.bytes.size(), SQLITE_TRANSIENT));
}

void Statement::BindAt(int index, std::nullptr_t) {
  CheckBind(sqlite3_bind_null(stmt_, index));
}

bool Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  owner_->Fail("`" + sql_ + "`");
}

void Statement::Run() {
  while (Step()) {
  }
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::Int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::Double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::Text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), size);
}

std::string Statement::Bytes(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
}

const std::string& Statement::database_path() const {
  return owner_->path();
}

Connection::Connection(const std::string& path, OpenMode mode, int busy_timeout_ms) : path_(path) {
  // NOMUTEX: a connection is only ever used by one thread at a time.
  int flags = SQLITE_OPEN_NOMUTEX |
              (mode == OpenMode::kReadOnly ? SQLITE_OPEN_READONLY
                                           : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    throw StoreError("cannot open database " + path + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busy_timeout_ms);
}

Connection::~Connection() {
  for (auto& [sql, stmt] : idle_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

void Connection::Fail(std::string_view what) const {
  std::string message = "database " + path_ + ": " + sqlite3_errmsg(db_) + " (while running " +
                        std::string(what) + ")";
  // The file or its disk, not the statement: the same write may work later.
  switch (sqlite3_errcode(db_) & 0xff) {
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN: throw StoreUnwritable(message);
    default: throw StoreError(message);
  }
}

void Connection::Exec(const std::string& sql) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    Fail("`" + sql + "`");
  }
}

Statement Connection::Prepare(const std::string& sql) {
  if (auto it = idle_.find(sql); it != idle_.end()) {
    sqlite3_stmt* stmt = it->second;
    idle_.erase(it);
    return Statement(*this, stmt, sql);
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    Fail("`" + sql + "`");
  }
  return Statement(*this, stmt, sql);
}

void Connection::Return(std::string sql, sqlite3_stmt* stmt) {
  idle_.emplace(std::move(sql), stmt);
}

std::string Connection::QueryText(const std::string& sql) {
  auto stmt = Prepare(sql);
  return stmt.Step() ? stmt.Text(0) : std::string();
}

int64_t Connection::Changes() const {
  return sqlite3_changes64(db_);
}

int64_t Connection::TotalChanges() const {
  return sqlite3_total_changes64(db_);
}

int64_t Connection::LastInsertRowId() const {
  return sqlite3_last_insert_rowid(db_);
}

bool Connection::InAutocommit() const {
  return sqlite3_get_autocommit(db_) != 0;
}

Transaction::Transaction(Connection& connection, TransactionKind kind) : connection_(connection) {
  connection_.Exec(kind == TransactionKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

Transaction::~Transaction() {
  // SQLite may already have rolled back on its own after an I/O error.
  if (open_ && !connection_.InAutocommit()) {
    try {
      connection_.Exec("ROLLBACK");
    } catch (const StoreError&) {
      // Nothing more to undo: a failed rollback leaves the connection with
      // no open transaction either.
    }
  }
}

void Transaction::Commit() {
  connection_.Exec("COMMIT");
  open_ = false;
}

}  // namespace tiletune::db
