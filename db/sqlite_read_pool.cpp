#include "db/sqlite_read_pool.h"

#include <stdexcept>
#include <utility>

namespace tiletune::db {

ReadPool::Lease::Lease(ReadPool& pool, std::unique_ptr<Connection> connection)
    : pool_(&pool), connection_(std::move(connection)) {}

ReadPool::Lease::~Lease() {
  if (connection_ == nullptr) return;
  {
    std::lock_guard lock(pool_->mutex_);
    pool_->idle_.push_back(std::move(connection_));
  }
  pool_->returned_.notify_one();
}

ReadPool::ReadPool(const std::string& path, int size, int busy_timeout_ms) {
  if (size < 1) {
    throw std::invalid_argument("read_connections must be at least 1, got " + std::to_string(size));
  }
  for (int i = 0; i < size; ++i) {
    idle_.push_back(std::make_unique<Connection>(path, OpenMode::kReadOnly, busy_timeout_ms));
  }
}

ReadPool::Lease ReadPool::Acquire() {
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [this] { return !idle_.empty(); });
  auto connection = std::move(idle_.back());
  idle_.pop_back();
  return Lease(*this, std::move(connection));
}

}  // namespace tiletune::db
