#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace tiletune::db {

class Connection;

// Marks a value to bind as a BLOB rather than TEXT.
struct Blob {
  std::string_view bytes;
};

// A prepared statement borrowed from its connection's cache; handed back
// (reset, bindings cleared) when it goes out of scope. Must not outlive the
// connection. Parameter and column indexes follow SQLite: binds from 1,
// columns from 0.
class Statement {
 public:
  Statement(Connection& owner, sqlite3_stmt* stmt, std::string sql);
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Binds the arguments to parameters 1..n in order.
  template <typename... Args>
  Statement& Bind(const Args&... args) {
    int index = 0;
    (BindAt(++index, args), ...);
    return *this;
  }
  template <std::integral T>
  void BindAt(int index, T value) {
    BindInt64(index, static_cast<int64_t>(value));
  }
  template <typename T>
  requires std::is_enum_v<T>
  void BindAt(int index, T value) { BindInt64(index, static_cast<int64_t>(value)); }
  void BindAt(int index, double value);
  void BindAt(int index, std::string_view text);
  void BindAt(int index, Blob blob);
  void BindAt(int index, std::nullptr_t);
  template <typename T>
  void BindAt(int index, const std::optional<T>& value) {
    if (value) {
      BindAt(index, *value);
    } else {
      BindAt(index, nullptr);
    }
  }

  // Advances to the next row; false when there are no more.
  bool Step();
  // Runs a statement that returns no rows that matter.
  void Run();

  bool IsNull(int column) const;
  int64_t Int64(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  std::string Bytes(int column) const;

  const std::string& database_path() const;

 private:
  void BindInt64(int index, int64_t value);
  void CheckBind(int rc) const;

  Connection* owner_;
  sqlite3_stmt* stmt_;
  std::string sql_;
};

enum class OpenMode { kReadWriteCreate, kReadOnly };

// One SQLite connection (RAII). Not thread-safe: the writer thread and the
// read pool each hand a connection to one thread at a time. Failures throw
// StoreError naming the database file.
class Connection {
 public:
  Connection(const std::string& path, OpenMode mode, int busy_timeout_ms);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one or more statements without results (schema, pragmas, BEGIN...).
  void Exec(const std::string& sql);
  Statement Prepare(const std::string& sql);
  // Runs a statement and returns its first column of the first row as text
  // ("" when it returns no row): PRAGMA answers.
  std::string QueryText(const std::string& sql);
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;
  // Rows changed since the connection opened: a write changed something
  // when this moved.
  int64_t TotalChanges() const;
  int64_t LastInsertRowId() const;
  // True when no transaction is open, also after SQLite rolled one back on
  // its own (an I/O error, a full disk).
  bool InAutocommit() const;

  const std::string& path() const { return path_; }

 private:
  friend class Statement;
  [[noreturn]] void Fail(std::string_view what) const;
  void Return(std::string sql, sqlite3_stmt* stmt);

  std::string path_;
  sqlite3* db_ = nullptr;
  // Prepared statements not in use, by SQL text. Several copies of one
  // statement may exist when it is used re-entrantly.
  std::unordered_multimap<std::string, sqlite3_stmt*> idle_;
};

enum class TransactionKind {
  kRead,   // BEGIN DEFERRED: one consistent snapshot for several reads
  kWrite,  // BEGIN IMMEDIATE: takes the write lock up front, so no upgrade deadlock
};

// A transaction that rolls back unless committed.
class Transaction {
 public:
  Transaction(Connection& connection, TransactionKind kind);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void Commit();

 private:
  Connection& connection_;
  bool open_ = true;
};

}  // namespace tiletune::db
