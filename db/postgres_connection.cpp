#include "db/postgres_connection.h"

#include <libpq-fe.h>

#include <array>
#include <bit>
#include <cctype>
#include <memory>
#include <utility>

#include "db/tuning_store.h"

namespace tiletune::db {
namespace {

// Type OIDs of the built-in types we send and read (pg_type.h, stable).
constexpr Oid kBool = 16;
constexpr Oid kBytea = 17;
constexpr Oid kInt8 = 20;
constexpr Oid kInt2 = 21;
constexpr Oid kInt4 = 23;
constexpr Oid kText = 25;
constexpr Oid kFloat8 = 701;

// Binary format is network byte order.
std::string BigEndian(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i, value >>= 8) bytes[i] = static_cast<char>(value & 0xff);
  return bytes;
}

uint64_t FromBigEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (unsigned char c : bytes) value = value << 8 | c;
  return value;
}

// libpq messages end with a newline.
std::string Trimmed(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::string PgParams::Push(unsigned type, std::string bytes) {
  types_.push_back(type);
  lengths_.push_back(static_cast<int>(bytes.size()));
  values_.push_back(std::move(bytes));
  nulls_.push_back(false);
  formats_.push_back(1);
  return "$" + std::to_string(values_.size());
}

std::string PgParams::AddInt64(int64_t value) {
  return Push(kInt8, BigEndian(static_cast<uint64_t>(value)));
}

std::string PgParams::Add(double value) {
  return Push(kFloat8, BigEndian(std::bit_cast<uint64_t>(value)));
}

std::string PgParams::Add(std::string_view text) {
  return Push(kText, std::string(text));
}

std::string PgParams::Add(Bytea bytes) {
  return Push(kBytea, std::string(bytes.bytes));
}

std::string PgParams::AddNull() {
  // Untyped: the server infers the type from where the NULL goes.
  std::string placeholder = Push(0, "");
  nulls_.back() = true;
  return placeholder;
}

std::vector<const char*> PgParams::values() const {
  std::vector<const char*> pointers;
  pointers.reserve(values_.size());
  for (std::size_t i = 0; i < values_.size(); ++i) {
    pointers.push_back(nulls_[i] ? nullptr : values_[i].data());
  }
  return pointers;
}

PgResult::PgResult(pg_result* result, std::string database)
    : result_(result), database_(std::move(database)) {}

PgResult::PgResult(PgResult&& other) noexcept
    : result_(std::exchange(other.result_, nullptr)), database_(std::move(other.database_)) {}

PgResult::~PgResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PgResult::Rows() const {
  return PQntuples(result_);
}

int64_t PgResult::Affected() const {
  std::string_view count = PQcmdTuples(result_);
  return count.empty() ? 0 : std::stoll(std::string(count));
}

bool PgResult::IsNull(int row, int column) const {
  return PQgetisnull(result_, row, column) != 0;
}

void PgResult::WrongType(int column, std::string_view wanted) const {
  throw StoreError("database " + database_ + ": column " + PQfname(result_, column) + " is not " +
                   std::string(wanted) + " (type oid " + std::to_string(PQftype(result_, column)) +
                   "); the schema is not the one this tiletuned expects");
}

std::string_view PgResult::Raw(int row, int column, int size) const {
  int length = PQgetlength(result_, row, column);
  if (PQgetisnull(result_, row, column) || length != size) {
    throw StoreError("database " + database_ + ": column " + PQfname(result_, column) + " holds " +
                     (PQgetisnull(result_, row, column) ? "NULL" : "a value") + " of " +
                     std::to_string(length) + " bytes where " + std::to_string(size) +
                     " were expected");
  }
  return {PQgetvalue(result_, row, column), static_cast<std::size_t>(length)};
}

int64_t PgResult::Int64(int row, int column) const {
  switch (PQftype(result_, column)) {
    case kInt8: return static_cast<int64_t>(FromBigEndian(Raw(row, column, 8)));
    case kInt4: return static_cast<int32_t>(FromBigEndian(Raw(row, column, 4)));
    case kInt2: return static_cast<int16_t>(FromBigEndian(Raw(row, column, 2)));
    default: WrongType(column, "an integer");
  }
}

double PgResult::Double(int row, int column) const {
  if (PQftype(result_, column) != kFloat8) WrongType(column, "double precision");
  return std::bit_cast<double>(FromBigEndian(Raw(row, column, 8)));
}

std::string PgResult::Text(int row, int column) const {
  return {PQgetvalue(result_, row, column),
          static_cast<std::size_t>(PQgetlength(result_, row, column))};
}

bool PgResult::Bool(int row, int column) const {
  if (PQftype(result_, column) != kBool) WrongType(column, "boolean");
  return Raw(row, column, 1) == std::string_view("\x01", 1);
}

std::string PostgresDisplayName(const std::string& url) {
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(
      PQconninfoParse(url.c_str(), &error), &PQconninfoFree);
  if (!options) {
    std::string message = Trimmed(error);
    PQfreemem(error);
    throw StoreError("db: not a PostgreSQL URL (" + message + ")");
  }
  std::string user, host, port, dbname;
  for (auto* option = options.get(); option->keyword != nullptr; ++option) {
    std::string_view keyword = option->keyword;
    std::string value = option->val != nullptr ? option->val : "";
    if (keyword == "user") user = value;
    if (keyword == "host") host = value;
    if (keyword == "port") port = value;
    if (keyword == "dbname") dbname = value;
  }
  std::string name = "postgresql://";
  if (!user.empty()) name += user + "@";
  name += host;
  if (!port.empty()) name += ":" + port;
  return name + "/" + dbname;
}

std::string PgPlaceholders(std::string_view sql) {
  std::string out(sql);
  for (size_t at = out.find('?'); at != std::string::npos; at = out.find('?', at + 1)) {
    if (at + 1 < out.size() && std::isdigit(static_cast<unsigned char>(out[at + 1]))) {
      out[at] = '$';
    }
  }
  return out;
}

PgConnection::PgConnection(const std::string& url, int connect_timeout_seconds,
                           const WriteOutcomeFn* on_write)
    : name_(PostgresDisplayName(url)), on_write_(on_write) {
  // Keywords before dbname are defaults: what the URL sets itself wins.
  std::string timeout = std::to_string(connect_timeout_seconds);
  const std::array<const char*, 4> keywords = {"connect_timeout", "application_name", "dbname",
                                               nullptr};
  const std::array<const char*, 4> values = {timeout.c_str(), "tiletuned", url.c_str(), nullptr};
  conn_ = PQconnectdbParams(keywords.data(), values.data(), 1);
  if (conn_ == nullptr) throw StoreError("database " + name_ + ": out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string message = Trimmed(PQerrorMessage(conn_));
    PQfinish(conn_);
    throw StoreUnreachable("database " + name_ + ": cannot connect: " + message);
  }
}

PgConnection::~PgConnection() {
  PQfinish(conn_);
}

PgResult PgConnection::Checked(pg_result* result) {
  if (result == nullptr) Fail(Trimmed(PQerrorMessage(conn_)));
  PgResult owned(result, name_);
  auto status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Fail(Trimmed(PQresultErrorMessage(result)), PQresultErrorField(result, PG_DIAG_SQLSTATE));
  }
  NoteWrite(result);
  return owned;
}

void PgConnection::NoteWrite(pg_result* result) {
  const std::string_view command = PQcmdStatus(result);
  if (command == "COMMIT" || command == "ROLLBACK") {
    // An aborted transaction's COMMIT answers ROLLBACK.
    const bool wrote = std::exchange(wrote_in_transaction_, false);
    if (wrote && command == "COMMIT" && on_write_ && *on_write_) (*on_write_)(nullptr);
    return;
  }
  const bool changed_rows = (command.starts_with("INSERT") || command.starts_with("UPDATE") ||
                             command.starts_with("DELETE")) &&
                            std::string_view(PQcmdTuples(result)) != "0";
  if (!changed_rows) return;
  if (PQtransactionStatus(conn_) == PQTRANS_INTRANS) {
    wrote_in_transaction_ = true;
  } else if (on_write_ && *on_write_) {
    (*on_write_)(nullptr);
  }
}

void PgConnection::Fail(const std::string& message, const char* sqlstate) const {
  // A broken connection is the server's absence, not a bad statement.
  if (PQstatus(conn_) == CONNECTION_BAD) {
    throw StoreUnreachable("database " + name_ + ": connection lost: " + message);
  }
  // The server's storage, not the statement: class 53 insufficient
  // resources (disk_full), 58 system error (io_error), XX internal
  // (data_corrupted), and a server or database that is read-only.
  const std::string_view code = sqlstate ? sqlstate : "";
  if (code.starts_with("53") || code.starts_with("58") || code.starts_with("XX") ||
      code == "25006") {
    const StoreUnwritable refused("database " + name_ + ": " + message);
    if (on_write_ && *on_write_) (*on_write_)(&refused);
    throw refused;
  }
  throw StoreError("database " + name_ + ": " + message);
}

PgResult PgConnection::Exec(const std::string& sql, const PgParams& params) {
  auto values = params.values();
  return Checked(PQexecParams(conn_, sql.c_str(), params.size(), params.types(), values.data(),
                              params.lengths(), params.formats(), 1));
}

void PgConnection::ExecScript(const std::string& sql) {
  Checked(PQexec(conn_, sql.c_str()));
}

int PgConnection::Socket() const {
  return PQsocket(conn_);
}

std::vector<std::string> PgConnection::TakeNotifications() {
  if (PQconsumeInput(conn_) == 0) Fail(Trimmed(PQerrorMessage(conn_)));
  std::vector<std::string> payloads;
  while (PGnotify* notification = PQnotifies(conn_)) {
    payloads.emplace_back(notification->extra);
    PQfreemem(notification);
  }
  return payloads;
}

bool PgConnection::StillOpen() {
  return PQconsumeInput(conn_) != 0 && PQstatus(conn_) == CONNECTION_OK;
}

bool PgConnection::Reusable() const {
  return PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) == PQTRANS_IDLE;
}

PgTransaction::PgTransaction(PgConnection& connection, PgTransactionKind kind)
    : connection_(connection) {
  connection_.ExecScript(kind == PgTransactionKind::kWrite
                             ? "BEGIN"
                             : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

PgTransaction::~PgTransaction() {
  if (!open_) return;
  try {
    connection_.ExecScript("ROLLBACK");
  } catch (const StoreError&) {
    // The connection is gone; the server rolled back on its own, and the
    // pool will not lend this connection again.
  }
}

void PgTransaction::Commit() {
  open_ = false;
  connection_.ExecScript("COMMIT");
}

}  // namespace tiletune::db
