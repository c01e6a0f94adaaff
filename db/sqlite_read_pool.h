#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/sqlite_connection.h"

namespace tiletune::db {

// Read-only connections shared by the query methods. In WAL mode a reader
// sees the last commit and never waits for the writer; a caller waits only
// when every connection is lent out.
class ReadPool {
 public:
  // A connection lent to one caller, given back when the lease ends.
  class Lease {
   public:
    Lease(ReadPool& pool, std::unique_ptr<Connection> connection);
    Lease(Lease&& other) noexcept = default;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Connection& operator*() const { return *connection_; }
    Connection* operator->() const { return connection_.get(); }

   private:
    ReadPool* pool_;
    std::unique_ptr<Connection> connection_;
  };

  ReadPool(const std::string& path, int size, int busy_timeout_ms);
  Lease Acquire();

 private:
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace tiletune::db
