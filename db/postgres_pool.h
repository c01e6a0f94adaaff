#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/postgres_connection.h"

namespace tiletune::db {

// Connections to one PostgreSQL database, lent to one caller at a time. A
// connection is opened when needed, up to `size`; one that broke (server
// restart, network) is dropped when handed back, or when found closed by
// the server before it is lent, and replaced by a fresh one, so the store
// recovers once the server is back.
class PgPool {
 public:
  class Lease {
   public:
    Lease(PgPool& pool, std::unique_ptr<PgConnection> connection);
    Lease(Lease&& other) noexcept = default;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    PgConnection& operator*() const { return *connection_; }
    PgConnection* operator->() const { return connection_.get(); }

   private:
    PgPool* pool_;
    std::unique_ptr<PgConnection> connection_;
  };

  // Opens the first connection now, so a wrong URL or an unreachable server
  // fails here.
  // Each connection tells `on_write` of its writes (PgConnection).
  PgPool(std::string url, int size, int connect_timeout_seconds, WriteOutcomeFn on_write = {});
  // Waits while all `size` connections are lent out.
  Lease Acquire();

 private:
  void GiveBack(std::unique_ptr<PgConnection> connection);

  const std::string url_;
  const int size_;
  const int connect_timeout_seconds_;
  const WriteOutcomeFn on_write_;
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<PgConnection>> idle_;
  int open_ = 0;  // idle or lent out
};

}  // namespace tiletune::db
