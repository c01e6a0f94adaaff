#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "db/tuning_store.h"

struct pg_conn;
struct pg_result;

namespace tiletune::db {

// A value to send as BYTEA (a serialized proto).
struct Bytea {
  std::string_view bytes;
};

// The parameters of one statement, all sent in binary with their types.
// Values never enter SQL text: Add returns the placeholder ("$3") to splice
// in where a statement is assembled from optional parts.
class PgParams {
 public:
  PgParams() = default;
  // Parameters $1..$n in order.
  template <typename... Args>
  explicit PgParams(const Args&... args) {
    (Add(args), ...);
  }

  template <std::integral T>
  std::string Add(T value) {
    return AddInt64(static_cast<int64_t>(value));
  }
  template <typename T>
  requires std::is_enum_v<T> std::string Add(T value) {
    return AddInt64(static_cast<int64_t>(value));
  }
  std::string Add(double value);
  std::string Add(std::string_view text);
  std::string Add(const std::string& text) { return Add(std::string_view(text)); }
  std::string Add(const char* text) { return Add(std::string_view(text)); }
  std::string Add(Bytea bytes);
  template <typename T>
  std::string Add(const std::optional<T>& value) {
    return value ? Add(*value) : AddNull();
  }

  int size() const { return static_cast<int>(values_.size()); }
  // Arrays in the shape PQexecParams takes; valid until the next Add.
  const unsigned* types() const { return types_.data(); }
  std::vector<const char*> values() const;
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  std::string AddInt64(int64_t value);
  std::string AddNull();
  std::string Push(unsigned type, std::string bytes);

  std::vector<unsigned> types_;
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

// The rows of one statement (RAII over PGresult), fetched in binary. Rows
// and columns count from 0. A column read as the wrong type throws
// StoreError: the schema and the query disagree.
class PgResult {
 public:
  PgResult(pg_result* result, std::string database);
  PgResult(PgResult&& other) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  PgResult& operator=(PgResult&&) = delete;
  ~PgResult();

  int Rows() const;
  // Rows an INSERT/UPDATE/DELETE changed.
  int64_t Affected() const;

  bool IsNull(int row, int column) const;
  // INT2, INT4 or INT8.
  int64_t Int64(int row, int column) const;
  double Double(int row, int column) const;
  // TEXT, or any column's raw bytes (BYTEA).
  std::string Text(int row, int column) const;
  std::string Bytes(int row, int column) const { return Text(row, column); }
  bool Bool(int row, int column) const;

 private:
  // The value's bytes; throws StoreError unless it is `size` bytes, not NULL.
  std::string_view Raw(int row, int column, int size) const;
  [[noreturn]] void WrongType(int column, std::string_view wanted) const;

  pg_result* result_;
  std::string database_;
};

// One libpq connection (RAII). Not thread-safe: the pool lends it to one
// thread at a time. Failures throw StoreError naming the database (never its
// password) and carrying the server's message; StoreUnreachable when the
// server cannot be reached or the connection broke.
class PgConnection {
 public:
  // `url` is a postgresql:// URL or a libpq conninfo string. `on_write`
  // hears of each statement or transaction that changed rows and of each
  // write the server refused (StoreUnwritable); it must outlive the
  // connection.
  PgConnection(const std::string& url, int connect_timeout_seconds,
               const WriteOutcomeFn* on_write = nullptr);
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection();

  PgResult Exec(const std::string& sql, const PgParams& params = PgParams());
  // Several statements without parameters (schema scripts).
  void ExecScript(const std::string& sql);
  // For LISTEN: the socket to wait on, and the payloads of the
  // notifications that arrived (reads what the server sent; throws
  // StoreUnreachable when the connection broke).
  int Socket() const;
  std::vector<std::string> TakeNotifications();
  // False once the server went away, or a transaction was left open: such
  // a connection is not handed out again.
  bool Reusable() const;
  // Reads what the server sent meanwhile without waiting, so that an idle
  // connection the server closed (restart, terminated backend) is found
  // broken before it is lent out; false then.
  bool StillOpen();

  // The URL without its password, for messages.
  const std::string& name() const { return name_; }

 private:
  // Owns `result`; throws StoreError with the server's message unless the
  // statement succeeded.
  PgResult Checked(pg_result* result);
  [[noreturn]] void Fail(const std::string& message, const char* sqlstate = nullptr) const;
  // Tells on_write_ that `result`, a statement that succeeded, changed rows.
  void NoteWrite(pg_result* result);

  pg_conn* conn_ = nullptr;
  std::string name_;
  const WriteOutcomeFn* on_write_;
  bool wrote_in_transaction_ = false;
};

// A statement written with SQLite's numbered placeholders (?1, ?2, ...) as
// PostgreSQL takes it ($1, $2, ...), for the statements both engines share.
// Statements must not hold a '?' elsewhere (in a string literal).
std::string PgPlaceholders(std::string_view sql);

// The URL `url` names, without its password: "postgresql://user@host:port/db".
// Throws StoreError when libpq cannot parse it.
std::string PostgresDisplayName(const std::string& url);

enum class PgTransactionKind {
  kWrite,     // READ COMMITTED: rows locked as they are written
  kSnapshot,  // REPEATABLE READ, READ ONLY: several reads see one commit
};

// A transaction that rolls back unless committed.
class PgTransaction {
 public:
  PgTransaction(PgConnection& connection, PgTransactionKind kind);
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  ~PgTransaction();
  void Commit();

 private:
  PgConnection& connection_;
  bool open_ = true;
};

}  // namespace tiletune::db
